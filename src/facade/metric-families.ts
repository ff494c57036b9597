import { bucketLabel, type MetricFamily, type MetricSample } from "../metrics-exposition.js";
import { HISTOGRAM_BUCKETS, type JobCounter, type JobHistogram, type SampleSnapshot } from "../metric-samples.js";
import type { QueueCounts } from "../models/queue-counts.js";
import type { ProcessHeartbeat } from "../models/process-heartbeats.js";

/** The counters, by the name the samples use: Prometheus name and help. */
export const COUNTER_METRICS: Readonly<Record<JobCounter, { readonly name: string; readonly help: string }>> = {
  enqueued: { name: "firm_queue_jobs_enqueued_total", help: "Jobs enqueued by this process, by queue and job name." },
  finished: { name: "firm_queue_jobs_finished_total", help: "Jobs whose handler succeeded, by queue and job name." },
  retried: {
    name: "firm_queue_jobs_retried_total",
    help: "Failed attempts that will be retried, by queue and job name.",
  },
  failed: {
    name: "firm_queue_jobs_failed_total",
    help: "Jobs that ran out of attempts and moved to the failed jobs, by queue and job name.",
  },
  abandoned: {
    name: "firm_queue_jobs_abandoned_total",
    help: "Jobs ended without retry by their retry policy's abandonOn, by queue and job name.",
  },
  dropped: {
    name: "firm_queue_jobs_dropped_total",
    help: "Jobs dropped at enqueue by a concurrency limit with onConflict drop, by queue and job name.",
  },
  cancelled: {
    name: "firm_queue_jobs_cancelled_total",
    help: "Jobs cancelled, waiting or claimed, as this process recorded them, by queue and job name.",
  },
  rateLimited: {
    name: "firm_queue_jobs_rate_limited_total",
    help: "Jobs held for a rate-limit budget or put back by a RateLimitedError, by queue and job name.",
  },
  pending: {
    name: "firm_queue_jobs_pending_total",
    help: "Jobs written pending on their dependencies, by queue and job name.",
  },
  dependenciesMet: {
    name: "firm_queue_jobs_dependencies_met_total",
    help: "Pending jobs released because their last dependency ended, by queue and job name.",
  },
  dependencyCancelled: {
    name: "firm_queue_jobs_dependency_cancelled_total",
    help: "Jobs cancelled because a dependency failed for good or was cancelled, by queue and job name.",
  },
};

/** The counter of batches, by how they ended. */
export const BATCH_METRIC = {
  name: "firm_queue_batches_ended_total",
  help: "Batches whose last job ended, by the batch's final state (finished, failed, cancelled).",
} as const;

/** The histograms, by the name the samples use. */
export const HISTOGRAM_METRICS: Readonly<Record<JobHistogram, { readonly name: string; readonly help: string }>> = {
  runTime: { name: "firm_queue_job_run_seconds", help: "Time the job's handler ran, per attempt, in seconds." },
  queueWait: {
    name: "firm_queue_job_queue_wait_seconds",
    help: "Time from a job's due time (enqueue, or its scheduled time) to the start of an attempt, in seconds.",
  },
};

/** The gauges read from the database. */
export const GAUGE_METRICS = {
  jobs: {
    name: "firm_queue_jobs",
    help: "Unfinished jobs by queue and state (ready, scheduled, blocked, claimed, failed).",
  },
  latency: {
    name: "firm_queue_oldest_ready_job_age_seconds",
    help: "Seconds the oldest ready job of the queue has waited; 0 when none is ready.",
  },
  paused: { name: "firm_queue_queue_paused", help: "1 when the queue is paused." },
  waitingForBudget: {
    name: "firm_queue_jobs_waiting_for_budget",
    help: "Due jobs waiting for a rate-limit budget of their own, by queue.",
  },
  processes: {
    name: "firm_queue_processes",
    help: "Registered processes heartbeating within the alive threshold, by kind.",
  },
  stale: { name: "firm_queue_stale_processes", help: "Registered processes whose heartbeat is overdue, by kind." },
  up: { name: "firm_queue_database_up", help: "1 when the last read of the gauges from the database succeeded." },
} as const;

const STATES = ["ready", "scheduled", "blocked", "claimed", "failed"] as const;
const KINDS = ["Supervisor", "Worker", "Dispatcher", "Scheduler"] as const;

/** What the gauges are built from: one read of queue counts and one of heartbeats. */
export interface GaugeReading {
  readonly queues: readonly QueueCounts[];
  readonly processes: readonly ProcessHeartbeat[];
}

/** The counter and histogram families of a snapshot (every metric listed, even with no samples yet). */
export function sampleFamilies(snapshot: SampleSnapshot): MetricFamily[] {
  const families: MetricFamily[] = [];
  for (const [key, meta] of Object.entries(COUNTER_METRICS) as [JobCounter, { name: string; help: string }][]) {
    const samples = (snapshot.counters[key] ?? []).map(([queue, job, value]) => ({
      name: meta.name,
      labels: { queue, job },
      value,
    }));
    families.push({ ...meta, type: "counter", samples: sortSamples(samples) });
  }
  families.push({
    ...BATCH_METRIC,
    type: "counter",
    samples: [...(snapshot.batchesEnded ?? [])]
      .sort((a, b) => compare(a[0], b[0]))
      .map(([state, value]) => ({ name: BATCH_METRIC.name, labels: { state }, value })),
  });
  for (const [key, meta] of Object.entries(HISTOGRAM_METRICS) as [JobHistogram, { name: string; help: string }][]) {
    const rows = [...(snapshot.histograms[key] ?? [])].sort((a, b) => compare(a[0], b[0]) || compare(a[1], b[1]));
    const samples: MetricSample[] = [];
    for (const [queue, job, counts, sum] of rows) {
      let cumulative = 0;
      const bounds = [...HISTOGRAM_BUCKETS, Number.POSITIVE_INFINITY];
      bounds.forEach((bound, index) => {
        cumulative += counts[index] ?? 0;
        samples.push({
          name: `${meta.name}_bucket`,
          labels: { queue, job, le: bucketLabel(bound) },
          value: cumulative,
        });
      });
      samples.push({ name: `${meta.name}_sum`, labels: { queue, job }, value: sum });
      samples.push({ name: `${meta.name}_count`, labels: { queue, job }, value: cumulative });
    }
    families.push({ ...meta, type: "histogram", samples });
  }
  return families;
}

/** The gauge families of a reading from the database; null: the read failed (only `database_up` 0). */
export function gaugeFamilies(reading: GaugeReading | null): MetricFamily[] {
  const up: MetricFamily = {
    ...GAUGE_METRICS.up,
    type: "gauge",
    samples: [{ name: GAUGE_METRICS.up.name, labels: {}, value: reading ? 1 : 0 }],
  };
  if (!reading) return [up];
  const jobs: MetricSample[] = [];
  for (const queue of reading.queues)
    for (const state of STATES)
      jobs.push({ name: GAUGE_METRICS.jobs.name, labels: { queue: queue.name, state }, value: queue[state] });
  const byKind = (stale: boolean) =>
    KINDS.map((kind) => ({
      name: stale ? GAUGE_METRICS.stale.name : GAUGE_METRICS.processes.name,
      labels: { kind },
      value: reading.processes.filter((process) => process.kind === kind && process.stale === stale).length,
    }));
  return [
    { ...GAUGE_METRICS.jobs, type: "gauge", samples: jobs },
    {
      ...GAUGE_METRICS.latency,
      type: "gauge",
      samples: reading.queues.map((queue) => ({
        name: GAUGE_METRICS.latency.name,
        labels: { queue: queue.name },
        value: queue.latency / 1000,
      })),
    },
    {
      ...GAUGE_METRICS.waitingForBudget,
      type: "gauge",
      samples: reading.queues.map((queue) => ({
        name: GAUGE_METRICS.waitingForBudget.name,
        labels: { queue: queue.name },
        value: queue.throttled,
      })),
    },
    {
      ...GAUGE_METRICS.paused,
      type: "gauge",
      samples: reading.queues.map((queue) => ({
        name: GAUGE_METRICS.paused.name,
        labels: { queue: queue.name },
        value: queue.paused ? 1 : 0,
      })),
    },
    { ...GAUGE_METRICS.processes, type: "gauge", samples: byKind(false) },
    { ...GAUGE_METRICS.stale, type: "gauge", samples: byKind(true) },
    up,
  ];
}

function sortSamples(samples: MetricSample[]): MetricSample[] {
  return samples.sort((a, b) => compare(a.labels.queue!, b.labels.queue!) || compare(a.labels.job!, b.labels.job!));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
