import { toMilliseconds } from "../duration.js";
import { resolveCliConfig, type CliFlags } from "./config.js";
import { firmFor } from "./firm-for.js";
import { formatCheckResults, liveCheck } from "./live-check.js";

/** The flags of `firm-queue check --live`. */
export interface LiveFlags {
  readonly live?: boolean;
  readonly maxLatency: string;
  readonly queue?: readonly string[];
}

/**
 * `firm-queue check --live`: the database URL and alive threshold come from the same config
 * file, variables and flags as `start`; job modules are loaded when configured (they may name
 * the database) but are not required.
 */
export async function runLiveCheck(flags: CliFlags & LiveFlags): Promise<{ ok: boolean; report: string }> {
  const maxLatencyMs = toMilliseconds(flags.maxLatency, "--max-latency");
  const config = await resolveCliConfig(flags);
  const firm = await firmFor(
    { modules: config.jobs, databaseUrl: config.databaseUrl, logLevel: "error", listenUrl: config.listenUrl },
    { jobsRequired: false },
  );
  try {
    const results = await liveCheck(firm, {
      maxLatencyMs,
      queues: flags.queue,
      aliveThresholdMs: config.start.processAliveThreshold,
    });
    return { ok: results.every((result) => result.ok), report: formatCheckResults(results) };
  } finally {
    await firm.close();
  }
}
