// Tables for bench/peers.mjs: absolute numbers and ratios against the reference system.

/**
 * Print the whole report to stdout: per-round tables when there are several rounds, the median
 * table, the ratios, and each system's settings and servers.
 * @param {{ headings: string[], rounds: Round[], jobs: number, latencySamples: number, referenceId: string }} report
 */
export function printReport({ headings, rounds, jobs, latencySamples, referenceId }) {
  console.log(`\n${headings.join("\n")}\n`);
  if (rounds.length > 1) {
    for (const round of rounds)
      console.log(`Round ${round.round}:\n\n${absoluteTable([round], jobs, latencySamples)}\n`);
    console.log(`Median of the ${rounds.length} rounds:\n`);
  }
  console.log(absoluteTable(rounds, jobs, latencySamples));
  if (rounds.some((round) => round.results.some((result) => result.id === referenceId && result.measurement))) {
    const { table, referenceLabel } = ratioTable(rounds, referenceId);
    const how = rounds.length > 1 ? " (median over rounds, smallest–largest in brackets)" : "";
    console.log(`\nRatios to ${referenceLabel} measured in the same round${how}:\n\n${table}\n`);
    for (const sentence of ratioSentences(rounds, referenceId)) console.log(`- ${sentence}`);
  } else {
    console.log(`\nNo ratios: the reference, ${referenceId}, was not measured.`);
  }
  console.log("\nSettings:");
  for (const result of rounds[0]?.results ?? [])
    console.log(
      `- ${result.label}: ${result.settings || (result.skipped ? `skipped: ${result.skipped}` : `failed: ${result.error}`)}`,
    );
  console.log("\nServers:");
  for (const [kind, note] of Object.entries(rounds[0]?.notes ?? {})) console.log(`- ${kind}: ${note}`);
}

/**
 * Metrics in table order; `higher` says which direction is better. Columns no result has (the
 * same-process latency unless --in-process-latency, RSS in files of older runs) are left out.
 */
const METRICS = [
  { key: "enqueueOne", title: "enqueue one by one (jobs/s)", higher: true, digits: 0 },
  { key: "enqueueBatch", title: "bulk enqueue (jobs/s)", higher: true, digits: 0 },
  { key: "processing", title: "processing (jobs/s)", higher: true, digits: 0 },
  { key: "median", title: "latency median, other process (ms)", higher: false, digits: 1, samples: "samples" },
  { key: "p99", title: "latency p99, other process (ms)", higher: false, digits: 1 },
  {
    key: "medianInProcess",
    title: "latency median, same process (ms)",
    higher: false,
    digits: 1,
    samples: "samplesInProcess",
  },
  { key: "p99InProcess", title: "latency p99, same process (ms)", higher: false, digits: 1 },
  { key: "rss", title: "worker RSS (MB)", higher: false, digits: 0 },
  { key: "workerCpu", title: "worker CPU per 1,000 jobs (ms)", higher: false, digits: 0 },
  { key: "serverCpu", title: "server CPU per 1,000 jobs (ms)", higher: false, digits: 0 },
  { key: "logPerJob", title: "WAL or redo log per job (bytes)", higher: false, digits: 0 },
  // Not the system's: how fast the machine ran around this run (a ratio far from 1 flags a round
  // whose comparison is unfair).
  { key: "probe", title: "machine probe around processing (ms)", higher: false, digits: 1 },
];

/** The metrics at least one result of these rounds has. @param {Round[]} rounds */
function metricsOf(rounds) {
  return METRICS.filter((metric) =>
    rounds.some((round) => round.results.some((result) => Number.isFinite(result.measurement?.[metric.key]))),
  );
}

/**
 * @typedef {{ id: string, label: string, version: string, settings: string, measurement?: import("./workload.mjs").Measurement, error?: string, skipped?: string }} SystemResult
 * @typedef {{ round: number, results: SystemResult[], notes?: Record<string, string> }} Round
 */

/** Absolute numbers of one round, or the median of several. @param {Round[]} rounds */
export function absoluteTable(rounds, jobs, latencySamples) {
  const metrics = metricsOf(rounds);
  const lines = [
    `| system | version | ${metrics.map((metric) => metric.title).join(" | ")} |`,
    `|---|---|${metrics.map(() => "---:").join("|")}|`,
  ];
  for (const id of systemIds(rounds)) {
    const entries = rounds.map((round) => round.results.find((result) => result.id === id)).filter(Boolean);
    const first = entries[0];
    const measured = entries.map((entry) => entry.measurement).filter(Boolean);
    if (measured.length === 0) {
      lines.push(
        `| ${first.label} | ${first.version || "–"} | ${first.skipped ? `skipped: ${first.skipped}` : `failed: ${first.error}`} |`,
      );
      continue;
    }
    const cells = metrics.map((metric) => {
      const values = measured.map((m) => m[metric.key]).filter(Number.isFinite);
      if (values.length === 0) return "–";
      let cell = median(values).toFixed(metric.digits);
      // Mark numbers measured on less than the full workload (time budget reached).
      if (metric.key === "processing" && measured.some((m) => m.processed < jobs))
        cell += ` (${Math.round(median(measured.map((m) => m.processed)))} jobs)`;
      const samples = metric.samples && measured.map((m) => m[metric.samples]).filter(Number.isFinite);
      if (samples?.some((n) => n < latencySamples)) cell += ` (${Math.round(median(samples))} samples)`;
      return cell;
    });
    lines.push(`| ${first.label} | ${first.version} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

/**
 * Each system's numbers divided by the reference's from the same round, then the median over
 * rounds, with the smallest and largest round in brackets when there are several. For latencies
 * a ratio above 1 means slower than the reference.
 * @param {Round[]} rounds
 * @param {string} referenceId
 */
export function ratioTable(rounds, referenceId) {
  const referenceLabel = rounds[0]?.results.find((result) => result.id === referenceId)?.label ?? referenceId;
  const metrics = metricsOf(rounds);
  const lines = [
    `| system | ${metrics.map((metric) => `${metric.title.replace(/ \(.*\)/, "")} (${metric.higher ? "higher" : "lower"} is better)`).join(" | ")} |`,
    `|---|${metrics.map(() => "---:").join("|")}|`,
  ];
  for (const id of systemIds(rounds)) {
    const perMetric = metrics.map((metric) => roundRatios(rounds, id, referenceId, metric.key));
    if (perMetric.every((ratios) => ratios.length === 0)) continue;
    const label = rounds[0].results.find((result) => result.id === id)?.label ?? id;
    const cells = perMetric.map((ratios) => {
      if (ratios.length === 0) return "–";
      const cell = `${formatRatio(median(ratios))}×`;
      return ratios.length > 1 && id !== referenceId
        ? `${cell} (${formatRatio(Math.min(...ratios))}–${formatRatio(Math.max(...ratios))})`
        : cell;
    });
    lines.push(`| ${label} | ${cells.join(" | ")} |`);
  }
  return { table: lines.join("\n"), referenceLabel };
}

/** One line per system and metric, "pg-boss processing = 0.05× firm-queue (PostgreSQL)". */
export function ratioSentences(rounds, referenceId) {
  const reference = rounds[0]?.results.find((result) => result.id === referenceId);
  if (!reference) return [];
  const sentences = [];
  for (const id of systemIds(rounds)) {
    if (id === referenceId) continue;
    const label = rounds[0].results.find((result) => result.id === id)?.label ?? id;
    const parts = [];
    for (const metric of metricsOf(rounds)) {
      const ratio = ratioOf(rounds, id, referenceId, metric.key);
      if (ratio !== undefined) parts.push(`${metric.title.replace(/ \(.*\)/, "")} ${formatRatio(ratio)}×`);
    }
    if (parts.length > 0) sentences.push(`${label} vs ${reference.label}: ${parts.join(", ")}`);
  }
  return sentences;
}

/** (system / reference) for one metric in every round where both were measured. */
function roundRatios(rounds, id, referenceId, key) {
  return rounds.flatMap((round) => {
    const mine = round.results.find((result) => result.id === id)?.measurement;
    const reference = round.results.find((result) => result.id === referenceId)?.measurement;
    return mine && reference && Number.isFinite(mine[key]) && Number.isFinite(reference[key])
      ? [mine[key] / reference[key]]
      : [];
  });
}

/** Median over rounds of (system / reference) for one metric; undefined when never both measured. */
function ratioOf(rounds, id, referenceId, key) {
  const perRound = roundRatios(rounds, id, referenceId, key);
  return perRound.length > 0 ? median(perRound) : undefined;
}

function systemIds(rounds) {
  const ids = [];
  for (const round of rounds) for (const result of round.results) if (!ids.includes(result.id)) ids.push(result.id);
  return ids;
}

function formatRatio(ratio) {
  return ratio >= 10 ? ratio.toFixed(0) : ratio >= 1 ? ratio.toFixed(2) : ratio.toPrecision(2);
}

/** @param {number[]} values */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
