/** A scrape in the Prometheus text format, read back: families with their type, samples by series. */
export interface Scrape {
  /** TYPE of each family named in the text. */
  readonly types: Map<string, string>;
  /** Value of each series, keyed as `name{a="x",b="y"}` with labels sorted by name. */
  readonly values: Map<string, number>;
  /** The value of one series, or undefined when absent. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

/**
 * Parse the text format strictly enough to catch mistakes: every sample line must belong to a
 * family declared by HELP and TYPE lines before it, label values must be quoted, values numbers.
 */
export function parseScrape(text: string): Scrape {
  const types = new Map<string, string>();
  const values = new Map<string, number>();
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      if (meta[1] === "TYPE") types.set(meta[2]!, meta[3]!);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText, valueText] = sample;
    const family = [name!, name!.replace(/_(bucket|sum|count)$/, "")].find((candidate) => types.has(candidate));
    if (!family) throw new Error(`sample of an undeclared family: ${line}`);
    const labels: Record<string, string> = {};
    if (labelText) {
      const pattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;
      let match: RegExpExecArray | null;
      let consumed = 0;
      while ((match = pattern.exec(labelText)) !== null) {
        labels[match[1]!] = match[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
        consumed = pattern.lastIndex;
      }
      if (consumed !== labelText.length) throw new Error(`bad labels: ${line}`);
    }
    const value = valueText === "+Inf" ? Infinity : valueText === "-Inf" ? -Infinity : Number(valueText);
    if (Number.isNaN(value) && valueText !== "NaN") throw new Error(`bad value: ${line}`);
    values.set(seriesKey(name!, labels), value);
  }
  return { types, values, value: (name, labels = {}) => values.get(seriesKey(name, labels)) };
}

function seriesKey(name: string, labels: Record<string, string>): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((key) => `${key}=${JSON.stringify(labels[key])}`);
  return `${name}{${sorted.join(",")}}`;
}
