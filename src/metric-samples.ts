/*
 * The job counters and histograms a process records, kept as plain numbers so they can travel
 * over a fork-mode child's IPC channel and be summed by its supervisor. Nothing here knows about
 * Prometheus libraries: metrics-exposition.ts turns a snapshot into text, and the facade turns it
 * into a prom-client registry when asked.
 */

/** A counter of jobs, by queue and job name. */
export type JobCounter =
  | "enqueued"
  | "finished"
  | "failed"
  | "retried"
  | "abandoned"
  | "dropped"
  | "cancelled"
  | "rateLimited"
  | "pending"
  | "dependenciesMet"
  | "dependencyCancelled";

/** A histogram of jobs, by queue and job name, in seconds. */
export type JobHistogram = "runTime" | "queueWait";

/** Upper bounds (seconds) of the histogram buckets: from a few milliseconds to an hour. */
export const HISTOGRAM_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600,
];

/** One labelled histogram: a count per bucket (not cumulative; the last is +Inf), and the sum. */
export interface HistogramCell {
  readonly counts: number[];
  sum: number;
}

/**
 * Everything recorded, as JSON-safe data: per metric, `[queue, job]` labels with a value.
 * A snapshot is cumulative since the process started, so a lost or repeated message cannot
 * count anything twice.
 */
export interface SampleSnapshot {
  readonly counters: Partial<Record<JobCounter, Array<[queue: string, job: string, value: number]>>>;
  readonly histograms: Partial<
    Record<JobHistogram, Array<[queue: string, job: string, counts: number[], sum: number]>>
  >;
  /** Batches that ended, by their final state (absent: none yet, or a child that counts none). */
  readonly batchesEnded?: Array<[state: string, value: number]>;
}

const emptyHistogram = (): HistogramCell => ({
  counts: new Array<number>(HISTOGRAM_BUCKETS.length + 1).fill(0),
  sum: 0,
});

type Labelled<T> = Map<string, Map<string, T>>;

function cell<T>(map: Labelled<T>, queue: string, job: string, create: () => T): T {
  let byJob = map.get(queue);
  if (!byJob) map.set(queue, (byJob = new Map()));
  let value = byJob.get(job);
  if (value === undefined) byJob.set(job, (value = create()));
  return value;
}

/**
 * The counters and histograms of this process. Recording is a couple of map lookups and an
 * addition; `version` moves on every change so a child sends only what changed.
 */
export class MetricSamples {
  private readonly counters = new Map<JobCounter, Labelled<{ value: number }>>();
  private readonly histograms = new Map<JobHistogram, Labelled<HistogramCell>>();
  private readonly batchesEnded = new Map<string, number>();
  /** Incremented on every change. */
  version = 0;

  /** Add `by` (default 1) to a counter. */
  count(counter: JobCounter, queue: string, job: string, by = 1): void {
    let map = this.counters.get(counter);
    if (!map) this.counters.set(counter, (map = new Map()));
    cell(map, queue, job, () => ({ value: 0 })).value += by;
    this.version++;
  }

  /** Add `by` (default 1) to the batches that ended as `state`. */
  countBatchEnded(state: string, by = 1): void {
    this.batchesEnded.set(state, (this.batchesEnded.get(state) ?? 0) + by);
    this.version++;
  }

  /** Record one observation of `seconds` (negative values count as 0: clocks of two hosts). */
  observe(histogram: JobHistogram, queue: string, job: string, seconds: number): void {
    let map = this.histograms.get(histogram);
    if (!map) this.histograms.set(histogram, (map = new Map()));
    const target = cell(map, queue, job, emptyHistogram);
    const value = Math.max(seconds, 0);
    let index = 0;
    while (index < HISTOGRAM_BUCKETS.length && value > HISTOGRAM_BUCKETS[index]!) index++;
    target.counts[index]!++;
    target.sum += value;
    this.version++;
  }

  /** Add a whole histogram cell: bucket counts as {@link HistogramCell} has them, and their sum. */
  add(histogram: JobHistogram, queue: string, job: string, counts: readonly number[], sum: number): void {
    let map = this.histograms.get(histogram);
    if (!map) this.histograms.set(histogram, (map = new Map()));
    const target = cell(map, queue, job, emptyHistogram);
    counts.forEach((count, index) => {
      if (index < target.counts.length) target.counts[index]! += count;
    });
    target.sum += sum;
    this.version++;
  }

  /** A copy of everything recorded so far. */
  snapshot(): SampleSnapshot {
    const counters: SampleSnapshot["counters"] = {};
    for (const [name, map] of this.counters) {
      const rows: Array<[string, string, number]> = [];
      for (const [queue, byJob] of map) for (const [job, { value }] of byJob) rows.push([queue, job, value]);
      counters[name] = rows;
    }
    const histograms: SampleSnapshot["histograms"] = {};
    for (const [name, map] of this.histograms) {
      const rows: Array<[string, string, number[], number]> = [];
      for (const [queue, byJob] of map)
        for (const [job, { counts, sum }] of byJob) rows.push([queue, job, [...counts], sum]);
      histograms[name] = rows;
    }
    if (this.batchesEnded.size === 0) return { counters, histograms };
    return { counters, histograms, batchesEnded: [...this.batchesEnded] };
  }
}

/** The sum of several snapshots (same labels add up, bucket by bucket for histograms). */
export function sumSnapshots(snapshots: readonly SampleSnapshot[]): SampleSnapshot {
  const total = new MetricSamples();
  for (const snapshot of snapshots) {
    for (const [name, rows] of Object.entries(snapshot.counters) as [JobCounter, [string, string, number][]][])
      for (const [queue, job, value] of rows) total.count(name, queue, job, value);
    for (const [name, rows] of Object.entries(snapshot.histograms) as [
      JobHistogram,
      [string, string, number[], number][],
    ][]) {
      for (const [queue, job, counts, sum] of rows) total.add(name, queue, job, counts, sum);
    }
    for (const [state, value] of snapshot.batchesEnded ?? []) total.countBatchEnded(state, value);
  }
  return total.snapshot();
}

/**
 * What a fork-mode supervisor knows of its children's samples: the latest snapshot of each
 * running child, plus the final totals of children that exited (so a replaced child's counts do
 * not vanish and the sums never go down).
 */
export class ChildSamples {
  private readonly latest = new Map<string, SampleSnapshot>();
  private retired: SampleSnapshot = { counters: {}, histograms: {} };

  /** A child sent its cumulative snapshot. */
  update(child: string, snapshot: SampleSnapshot): void {
    this.latest.set(child, snapshot);
  }

  /** A child exited: its last snapshot joins the retired totals. */
  retire(child: string): void {
    const last = this.latest.get(child);
    if (!last) return;
    this.latest.delete(child);
    this.retired = sumSnapshots([this.retired, last]);
  }

  /** The sum over every child, running or exited. */
  total(): SampleSnapshot {
    return sumSnapshots([this.retired, ...this.latest.values()]);
  }
}
