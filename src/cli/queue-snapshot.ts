import { durationFlag } from "./arguments.js";
import type { FirmQueue } from "../firm-queue.js";
import type { JobSummary } from "../models/job-listing.js";
import type { ProcessDetail } from "../models/process-listing.js";
import type { QueueCounts } from "../models/queue-counts.js";
import type { ThroughputBucket } from "../models/throughput.js";

/** Jobs finished and failed for good over a span: counts and the rate per minute. */
export interface Rate {
  readonly finished: number;
  readonly failed: number;
  readonly finishedPerMinute: number;
  readonly failedPerMinute: number;
}

/** One queue's jobs per second over the snapshot's per-second window. */
export interface QueueRate {
  readonly queue: string;
  readonly enqueuedPerSecond: number;
  /** False when more jobs were enqueued than were read (the rate is at least the figure). */
  readonly enqueuedExact: boolean;
  readonly finishedPerSecond: number;
  readonly failedPerSecond: number;
}

/** Everything `stats` and `top` show, read in one go through `firm.inspect`. */
export interface QueueSnapshot {
  readonly at: Date;
  readonly queues: readonly QueueCounts[];
  readonly totals: {
    readonly ready: number;
    readonly scheduled: number;
    readonly blocked: number;
    readonly running: number;
    readonly failed: number;
    /** Jobs waiting: ready, scheduled and blocked. */
    readonly backlog: number;
    /** Milliseconds the oldest ready job of any queue has waited. */
    readonly latency: number;
  };
  /** Over the last minute, the last 5 minutes and the last hour (finished jobs count only when they are kept). */
  readonly rates: {
    /** Over the last 10 whole seconds, per second. */
    readonly perSecond: { readonly finished: number; readonly failed: number };
    readonly lastMinute: Rate;
    readonly last5Minutes: Rate;
    readonly lastHour: Rate;
    /** Per queue, over the same last 10 whole seconds as `perSecond`; queues with no activity are left out. */
    readonly perQueue: readonly QueueRate[];
  };
  /** The newest failed jobs, newest first. */
  readonly recentFailures: readonly JobSummary[];
  readonly processes: readonly ProcessDetail[];
}

/** Read a {@link QueueSnapshot}: six reads through `firm.inspect`, run together. */
export async function takeSnapshot(
  firm: FirmQueue,
  options: { readonly aliveThreshold: string | number; readonly failures: number },
): Promise<QueueSnapshot> {
  const [queues, buckets, seconds, perQueue, failed, processes] = await Promise.all([
    firm.inspect.queues(),
    firm.inspect.throughput({ buckets: 60, bucketMs: 60_000 }),
    firm.inspect.throughput({ buckets: 11, bucketMs: 1000 }),
    firm.inspect.queueThroughput({ windowMs: 10_000 }),
    firm.inspect.jobs({ state: "failed", limit: options.failures }),
    firm.inspect.processes({
      aliveThreshold:
        typeof options.aliveThreshold === "number" ? options.aliveThreshold : durationFlag(options.aliveThreshold),
    }),
  ]);
  const sum = (field: "ready" | "scheduled" | "blocked" | "claimed" | "failed") =>
    queues.reduce((total, queue) => total + queue[field], 0);
  const totals = {
    ready: sum("ready"),
    scheduled: sum("scheduled"),
    blocked: sum("blocked"),
    running: sum("claimed"),
    failed: sum("failed"),
    backlog: sum("ready") + sum("scheduled") + sum("blocked"),
    latency: Math.max(0, ...queues.map((queue) => queue.latency)),
  };
  return {
    at: new Date(),
    queues,
    totals,
    rates: {
      // The newest one-second bucket is the second now running: leave it out.
      perSecond: {
        finished: seconds.slice(0, -1).reduce((total, bucket) => total + bucket.finished, 0) / 10,
        failed: seconds.slice(0, -1).reduce((total, bucket) => total + bucket.failed, 0) / 10,
      },
      lastMinute: rate(buckets, 1),
      last5Minutes: rate(buckets, 5),
      lastHour: rate(buckets, 60),
      perQueue: perQueue.queues.map((queue) => ({
        queue: queue.queue,
        enqueuedPerSecond: queue.enqueued / 10,
        enqueuedExact: queue.enqueuedExact,
        finishedPerSecond: queue.finished / 10,
        failedPerSecond: queue.failed / 10,
      })),
    },
    recentFailures: failed.jobs,
    processes,
  };
}

/** The rate over the newest `minutes` one-minute buckets (the newest one is the minute now running). */
function rate(buckets: readonly ThroughputBucket[], minutes: number): Rate {
  const span = buckets.slice(-minutes);
  const finished = span.reduce((total, bucket) => total + bucket.finished, 0);
  const failed = span.reduce((total, bucket) => total + bucket.failed, 0);
  return { finished, failed, finishedPerMinute: finished / minutes, failedPerMinute: failed / minutes };
}
