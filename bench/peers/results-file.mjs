// The --json file of bench/peers.mjs and --merge's reading of it. A file holds one report per
// durability mode it ran ("relaxed", "durable"); each report holds its rounds.
//
// Files of the first benchmark runs (no `format`) hold one report, measured on relaxed servers
// with the latency job enqueued in the worker's own process: read as such.
import { readFileSync, writeFileSync } from "node:fs";

/**
 * @typedef {object} Report
 * @property {"relaxed" | "durable"} durability
 * @property {string} heading
 * @property {number} jobs
 * @property {number} latencySamples
 * @property {import("./report.mjs").Round[]} rounds
 */

/** @param {string} file @param {Report[]} reports */
export function writeResults(file, reports) {
  writeFileSync(file, `${JSON.stringify({ format: 2, reports }, null, 2)}\n`);
}

/**
 * The reports of several files, those of one durability mode combined into one report with its
 * rounds renumbered, in the order the modes first appear.
 * @param {string[]} files
 * @returns {Report[]}
 */
export function mergeResults(files) {
  /** @type {Map<string, Report & { headings: string[] }>} */
  const byMode = new Map();
  for (const file of files) {
    for (const report of readReports(file)) {
      const merged = byMode.get(report.durability);
      if (!merged) {
        byMode.set(report.durability, { ...report, headings: [report.heading], rounds: [...report.rounds] });
      } else {
        merged.headings.push(report.heading);
        merged.rounds.push(...report.rounds);
      }
    }
  }
  return [...byMode.values()].map((report) => ({
    ...report,
    heading: report.headings.join("\n"),
    rounds: report.rounds.map((round, index) => ({ ...round, round: index + 1 })),
  }));
}

/** @param {string} file @returns {Report[]} */
function readReports(file) {
  const content = JSON.parse(readFileSync(file, "utf8"));
  if (content.format === 2) return content.reports;
  if (!Array.isArray(content.rounds)) throw new Error("neither a report (rounds) nor a list of reports");
  return [{ ...content, durability: "relaxed", rounds: content.rounds.map(sameProcessLatency) }];
}

/** A round of the first runs: its latency was measured with the job enqueued in the worker's process. */
function sameProcessLatency(round) {
  return {
    ...round,
    results: round.results.map((result) => {
      if (!result.measurement) return result;
      const { median, p99, samples, ...rest } = result.measurement;
      return {
        ...result,
        measurement: { ...rest, medianInProcess: median, p99InProcess: p99, samplesInProcess: samples },
      };
    }),
  };
}
