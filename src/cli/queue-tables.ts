import { count, duration } from "../dashboard/format.js";
import type { JobSummary } from "../models/job-listing.js";
import type { QueueCounts } from "../models/queue-counts.js";
import type { QueueRate } from "./queue-snapshot.js";
import { formatTable } from "./table.js";

const figure = (title: string) => ({ title, right: true });

/** What a queue table shows beside the counts by state: `top` adds the backlog and the per-queue rates. */
export interface QueueTableColumns {
  /** A BACKLOG column (ready + scheduled + blocked) before the counts. */
  readonly backlog?: boolean;
  /** Rates per second per queue, as ENQ/S, DONE/S and FAIL/S columns; queues with only a rate get a row too. */
  readonly rates?: readonly QueueRate[];
}

/**
 * Queues with their counts by state, latency and pause, for people: the one layout `queues list`,
 * `stats` and `top` share.
 */
export function queueTable(list: readonly QueueCounts[], columns: QueueTableColumns = {}): string {
  const rates = new Map((columns.rates ?? []).map((rate) => [rate.queue, rate]));
  const idle = (name: string): QueueCounts => ({
    name,
    ready: 0,
    scheduled: 0,
    blocked: 0,
    throttled: 0,
    claimed: 0,
    failed: 0,
    latency: 0,
    paused: false,
  });
  const known = new Set(list.map((queue) => queue.name));
  const queues = [...list, ...[...rates.keys()].filter((name) => !known.has(name)).map(idle)].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  if (queues.length === 0) return "No queue has unfinished jobs or a pause.";
  const perSecond = (value: number | undefined) => (value === undefined || value === 0 ? "0" : value.toFixed(1));
  return formatTable(
    [
      "QUEUE",
      ...(columns.backlog ? [figure("BACKLOG")] : []),
      figure("READY"),
      figure("SCHEDULED"),
      figure("BLOCKED"),
      figure("RUNNING"),
      figure("FAILED"),
      figure("LATENCY"),
      ...(columns.rates ? [figure("ENQ/S"), figure("DONE/S"), figure("FAIL/S")] : []),
      "STATUS",
    ],
    queues.map((queue) => {
      const rate = rates.get(queue.name);
      return [
        queue.name,
        ...(columns.backlog ? [count(queue.ready + queue.scheduled + queue.blocked)] : []),
        count(queue.ready),
        count(queue.scheduled),
        count(queue.blocked),
        count(queue.claimed),
        count(queue.failed),
        queue.ready > 0 ? duration(queue.latency) : "-",
        ...(columns.rates
          ? [
              `${rate && !rate.enqueuedExact ? "≥" : ""}${perSecond(rate?.enqueuedPerSecond)}`,
              perSecond(rate?.finishedPerSecond),
              perSecond(rate?.failedPerSecond),
            ]
          : []),
        queue.paused ? "paused" : "active",
      ];
    }),
  );
}

/**
 * The newest failed jobs, for people, or "No failed jobs.": `when` is the time column (`stats`
 * prints the moment, `top` how long ago).
 */
export function failuresTable(
  jobs: readonly JobSummary[],
  when: { readonly title: string; readonly of: (job: JobSummary) => string },
): string {
  if (jobs.length === 0) return "No failed jobs.";
  return `Newest failures:\n${formatTable(
    ["ID", "NAME", "QUEUE", when.title, "ERROR"],
    jobs.map((job) => [job.id, job.name, job.queue, when.of(job), `${job.error?.name}: ${job.error?.message}`]),
  )}`;
}
