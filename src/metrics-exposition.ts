/** One line of a metric: its full name (with `_bucket`, `_sum`, `_count` for histograms), labels, value. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A metric with its HELP and TYPE lines and its samples, in the Prometheus text format's terms. */
export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge" | "histogram";
  readonly samples: readonly MetricSample[];
}

/** The content type of the Prometheus text exposition format, version 0.0.4. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * Render families in the Prometheus text exposition format (version 0.0.4): a HELP and a TYPE
 * line per family, then one line per sample. Label values are escaped (backslash, quote,
 * newline); numbers use Prometheus' spellings of infinity and NaN.
 */
export function formatExposition(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels)
        .map(([key, value]) => `${key}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
        .join(",");
      lines.push(`${sample.name}${labels === "" ? "" : `{${labels}}`} ${formatNumber(sample.value)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

/** The `le` label of a bucket bound. */
export function bucketLabel(bound: number): string {
  return bound === Number.POSITIVE_INFINITY ? "+Inf" : String(bound);
}
