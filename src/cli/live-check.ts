import { duration } from "../dashboard/format.js";
import type { FirmQueue } from "../firm-queue.js";
import type { ProcessHeartbeat } from "../models/process-heartbeats.js";
import type { QueueCounts } from "../models/queue-counts.js";

/** What `firm-queue check --live` holds a deployment to. */
export interface LiveCheckOptions {
  /** The oldest ready job of each checked queue must have waited less than this (ms). */
  readonly maxLatencyMs: number;
  /** Queues to check the latency of; undefined: every queue. */
  readonly queues: readonly string[] | undefined;
  /** A process whose heartbeat is older is dead (ms). */
  readonly aliveThresholdMs: number;
}

/** One check's verdict, printed as one line. */
export interface CheckResult {
  readonly ok: boolean;
  readonly name: string;
  readonly detail: string;
}

/**
 * Check a running deployment from outside, through `firm.inspect`: the database answers, a
 * supervisor and a worker are heartbeating and no registered process is overdue, and no checked
 * queue's oldest ready job has waited `maxLatencyMs` or more.
 */
export async function liveCheck(firm: FirmQueue, options: LiveCheckOptions): Promise<CheckResult[]> {
  let processes: ProcessHeartbeat[];
  let queues: QueueCounts[];
  const started = performance.now();
  try {
    [processes, queues] = await Promise.all([
      firm.inspect.heartbeats({ aliveThreshold: options.aliveThresholdMs }),
      firm.inspect.queues(),
    ]);
  } catch (error) {
    return [{ ok: false, name: "database", detail: error instanceof Error ? error.message : String(error) }];
  }
  const answered = { ok: true, name: "database", detail: `answered in ${duration(performance.now() - started)}` };
  return [answered, processCheck(processes, options.aliveThresholdMs), latencyCheck(queues, options)];
}

function processCheck(processes: readonly ProcessHeartbeat[], thresholdMs: number): CheckResult {
  const alive = processes.filter((process) => !process.stale);
  const stale = processes.filter((process) => process.stale);
  const kinds = ["Supervisor", "Worker", "Dispatcher", "Scheduler"] as const;
  const counted = kinds
    .map((kind) => [kind, alive.filter((process) => process.kind === kind).length] as const)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => `${count} ${kind}`);
  const missing = (["Supervisor", "Worker"] as const).filter((kind) => !alive.some((process) => process.kind === kind));
  const problems = [
    ...missing.map((kind) => `no ${kind} heartbeating`),
    ...(stale.length > 0
      ? [
          `${stale.length} overdue (${stale
            .slice(0, 3)
            .map(
              (process) =>
                `${process.kind} ${process.name} on ${process.hostname}, ${duration(process.heartbeatAgeMs)}`,
            )
            .join("; ")}${stale.length > 3 ? "; …" : ""})`,
        ]
      : []),
  ];
  const summary = `${counted.join(", ") || "none"} heartbeating within ${duration(thresholdMs)}`;
  return {
    ok: problems.length === 0,
    name: "processes",
    detail: problems.length === 0 ? summary : `${problems.join("; ")}; ${summary}`,
  };
}

function latencyCheck(queues: readonly QueueCounts[], options: LiveCheckOptions): CheckResult {
  const checked = options.queues
    ? options.queues.map((name) => queues.find((queue) => queue.name === name) ?? { name, latency: 0, ready: 0 })
    : queues;
  const limit = duration(options.maxLatencyMs);
  const late = checked.filter((queue) => queue.latency >= options.maxLatencyMs).sort((a, b) => b.latency - a.latency);
  const worst = [...checked].sort((a, b) => b.latency - a.latency)[0];
  if (late.length > 0) {
    const named = late.map((queue) => `"${queue.name}" ${duration(queue.latency)} (${queue.ready} ready)`);
    return { ok: false, name: "latency", detail: `oldest ready job over ${limit} in ${named.join(", ")}` };
  }
  const scope = options.queues ? `${checked.length} queue(s)` : `all ${checked.length} queue(s)`;
  return {
    ok: true,
    name: "latency",
    detail:
      worst && worst.latency > 0
        ? `oldest ready job ${duration(worst.latency)} ("${worst.name}"), under ${limit} in ${scope}`
        : `no job waiting in ${scope} (limit ${limit})`,
  };
}

/** The results as lines: `ok   name: detail` or `FAIL name: detail`. */
export function formatCheckResults(results: readonly CheckResult[]): string {
  return results.map((result) => `${result.ok ? "ok  " : "FAIL"} ${result.name}: ${result.detail}`).join("\n");
}
