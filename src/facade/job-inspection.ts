import { checkJobId, checkJobName, checkQueueName, positiveInteger, rejectUnknownKeys } from "../option-checks.js";
import type { ReadRouting, ReadSource } from "./read-routing.js";
import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { decodeCursor } from "../models/job-cursor.js";
import type { JobState } from "../models/job-info.js";
import { countJobsUpTo, type BoundedCount } from "../models/job-count.js";
import { listJobsPage, type JobListingQuery, type JobPage } from "../models/job-listing.js";
import { findJobDetail, type JobDetail } from "../models/job-timeline.js";
import { listProcessDetails, type ProcessDetail } from "../models/process-listing.js";
import { listProcessHeartbeats, type ProcessHeartbeat } from "../models/process-heartbeats.js";
import { countJobsByQueue, type QueueCounts } from "../models/queue-counts.js";
import { latestRecurringRuns, type RecurringRun } from "../models/recurring-runs.js";
import { listSemaphoreUsage, type SemaphoreUsage } from "../models/semaphore-usage.js";
import { listRateBudgets, type RateBudgetUsage } from "../models/rate-budget-listing.js";
import { throughputBuckets, type ThroughputBucket } from "../models/throughput.js";
import { queueThroughput, type QueueThroughput } from "../models/queue-throughput.js";
import type { RecurringOperations, RecurringTaskInfo } from "./recurring-operations.js";
import { shown } from "../shown-value.js";
import {
  inspectBatch,
  inspectBatches,
  type BatchDetail,
  type BatchJobsOptions,
  type BatchPage,
  type ListBatchesOptions,
} from "./batch-inspection.js";

/** Options of `firm.inspect.jobs()`. */
export interface ListJobsOptions {
  /** Which jobs: ready, scheduled, blocked, claimed, failed, finished or cancelled. Required. */
  readonly state: JobState;
  /** Only this queue. */
  readonly queue?: string | undefined;
  /** Only jobs of this name. */
  readonly name?: string | undefined;
  /** Only jobs enqueued with this unique key (see docs/jobs.md). */
  readonly key?: string | undefined;
  /** Only jobs that entered their state at or after this time (for `scheduled`: due at or after). */
  readonly from?: Date | undefined;
  /** Only jobs that entered their state before this time. */
  readonly to?: Date | undefined;
  /** Most jobs per page, 1 to 500. Default 50. */
  readonly limit?: number | undefined;
  /** The `nextCursor` of the previous page; absent or null for the first page. */
  readonly cursor?: string | null | undefined;
}

/** Options of `firm.inspect.count()`: the filters of `jobs()`, and where to stop counting. */
export interface CountJobsOptions {
  readonly state: JobState;
  readonly queue?: string | undefined;
  readonly name?: string | undefined;
  readonly key?: string | undefined;
  readonly from?: Date | undefined;
  readonly to?: Date | undefined;
  /** Count no further than this (1 to 1,000,000). Default 10,000. */
  readonly upTo?: number | undefined;
}

/** Options of `firm.inspect.throughput()`. */
export interface ThroughputOptions {
  /** How many buckets, 1 to 240. Default 60. */
  readonly buckets?: number | undefined;
  /** Length of each bucket in milliseconds, at least 1000. Default 60,000 (per minute). */
  readonly bucketMs?: number | undefined;
}

/** Options of `firm.inspect.queueThroughput()`. */
export interface QueueThroughputOptions {
  /** The window, ending at the current whole second, in milliseconds: 1,000 to 3,600,000. Default 10,000. */
  readonly windowMs?: number | undefined;
  /** Most of the newest jobs read to count enqueued ones, 1 to 1,000,000. Default 100,000. */
  readonly enqueuedUpTo?: number | undefined;
}

/** Options of `firm.inspect.rateLimits()`. */
export interface RateLimitsOptions {
  /** Most budgets listed, in key order, 1 to 1,000. Default 100. */
  readonly limit?: number | undefined;
}

/** Options of `firm.inspect.job()`. */
export interface JobDetailOptions {
  /** Most dependencies and most dependents listed (each list), 1 to 1,000. Default 100; their counts are always whole. */
  readonly related?: number | undefined;
}

/** A recurring task with its latest runs. */
export interface RecurringTaskDetail extends RecurringTaskInfo {
  /** The latest runs (ticks and run-now), newest first. */
  readonly runs: readonly RecurringRun[];
}

const JOB_STATES: ReadonlySet<string> = new Set([
  "pending",
  "ready",
  "scheduled",
  "blocked",
  "claimed",
  "failed",
  "finished",
  "cancelled",
]);
const JOBS_KEYS = new Set(["state", "queue", "name", "key", "from", "to", "limit", "cursor"]);
const COUNT_KEYS = new Set(["state", "queue", "name", "key", "from", "to", "upTo"]);
const THROUGHPUT_KEYS = new Set(["buckets", "bucketMs"]);
const QUEUE_THROUGHPUT_KEYS = new Set(["windowMs", "enqueuedUpTo"]);
const RATE_LIMITS_KEYS = new Set(["limit"]);
const JOB_KEYS = new Set(["related"]);

/**
 * `firm.inspect`: read-only views of the queue for dashboards, scripts and alerts. Nothing here
 * changes anything; every read is an index range or a lookup by key, so it stays cheap on big
 * tables (job listings page with a keyset cursor, never an offset).
 */
export class JobInspection {
  constructor(
    /** The `readUrl` replica while it is fit to read from, else the primary. */
    private readonly reads: Pick<ReadRouting, "database" | "source">,
    private readonly recurring: RecurringOperations,
    /** Slots per key of a job defined on this instance, by job name. */
    private readonly limitOf: (jobName: string) => number | null,
  ) {}

  /**
   * Where these views read now, with the `readUrl` replica's state and lag: `readsFrom` is
   * `"replica"`, or `"primary"` with the `reason` (the replica unreachable, not following, or
   * further behind than `readMaxLag`). Null without `readUrl`: everything reads from the primary.
   */
  async replication(): Promise<ReadSource | null> {
    return this.reads.source();
  }

  /** Every queue with unfinished jobs or a pause: counts by state, latency, paused or not. */
  async queues(): Promise<QueueCounts[]> {
    // Latency compares with ready rows' times, written by the database's clock.
    const database = await this.reads.database();
    return countJobsByQueue(database.db, database.clock.now());
  }

  /**
   * One page of jobs in a state, newest first, matching every filter given. Pass the page's
   * `nextCursor` back as `cursor` for the next page; it is null on the last page.
   */
  async jobs(options: ListJobsOptions): Promise<JobPage> {
    const query = checkListing(options, JOBS_KEYS, "jobs");
    const limit = positiveInteger(options.limit ?? 50, "inspect.jobs option limit");
    if (limit > 500) throw new ConfigurationError(`inspect.jobs option limit must be at most 500, got ${limit}`);
    const cursor =
      options.cursor === undefined || options.cursor === null ? null : decodeCursor(String(options.cursor));
    return listJobsPage(await this.db(), query, limit, cursor);
  }

  /**
   * How many jobs `jobs()` would list for these filters, counting no further than `upTo`
   * (default 10,000): `{ count, exact }`, with `exact` false when there are more. The cost has
   * a ceiling on any table size; use it where "10,000+" is as good as the precise figure.
   */
  async count(options: CountJobsOptions): Promise<BoundedCount> {
    const query = checkListing(options, COUNT_KEYS, "count");
    const upTo = positiveInteger(options.upTo ?? 10_000, "inspect.count option upTo");
    if (upTo > 1_000_000)
      throw new ConfigurationError(`inspect.count option upTo must be at most 1000000, got ${upTo}`);
    return countJobsUpTo(await this.db(), query, upTo);
  }

  /**
   * A job with its timeline, the process running it, the recurring task that made it, its
   * dependencies and dependents (the first `related` of each, default 100, with their counts) and
   * its batch; null when there is no such job.
   */
  async job(id: number, options: JobDetailOptions = {}): Promise<JobDetail | null> {
    const jobId = checkJobId(id, "inspect.job");
    rejectUnknownKeys(options, JOB_KEYS, "inspect.job option");
    const related = positiveInteger(options.related ?? 100, "inspect.job option related");
    if (related > 1000) throw new ConfigurationError(`inspect.job option related must be at most 1000, got ${related}`);
    return findJobDetail(await this.db(), jobId, related);
  }

  /**
   * One page of batches (`firm.batch`), newest first, each with its state and counts. Pass the
   * page's `nextCursor` back as `cursor` for the next page; it is null on the last page.
   */
  async batches(options: ListBatchesOptions = {}): Promise<BatchPage> {
    return inspectBatches(await this.db(), options);
  }

  /**
   * A batch with its state, counts, callbacks and one page of its jobs (in the order they were
   * added, each with its state now); pass `nextCursor` back as `cursor` for the next page of its
   * jobs. Null when there is no such batch.
   */
  async batch(id: number, options: BatchJobsOptions = {}): Promise<BatchDetail | null> {
    return inspectBatch(await this.db(), id, options);
  }

  /**
   * Every registered process (supervisors first) with its heartbeat and running jobs. A process
   * is `stale` when its last heartbeat is older than `aliveThreshold` (default 5 min, the
   * supervisors' default; pass the `processAliveThreshold` your processes run with).
   */
  async processes(options: { readonly aliveThreshold?: Duration } = {}): Promise<ProcessDetail[]> {
    rejectUnknownKeys(options, new Set(["aliveThreshold"]), "inspect.processes option");
    const threshold = toMilliseconds(options.aliveThreshold ?? 300_000, "inspect.processes option aliveThreshold");
    return listProcessDetails(await this.db(), new Date(), threshold);
  }

  /**
   * Every registered process with the age of its last heartbeat, by the database's clock, and
   * whether that passes `aliveThreshold` (default 5 min): a cheap read for health checks and
   * metrics (no jobs). `supervisorId`: only that supervisor and the processes it supervises.
   */
  async heartbeats(
    options: { readonly aliveThreshold?: Duration; readonly supervisorId?: number } = {},
  ): Promise<ProcessHeartbeat[]> {
    rejectUnknownKeys(options, new Set(["aliveThreshold", "supervisorId"]), "inspect.heartbeats option");
    const threshold = toMilliseconds(options.aliveThreshold ?? 300_000, "inspect.heartbeats option aliveThreshold");
    const supervisorId =
      options.supervisorId === undefined
        ? undefined
        : positiveInteger(options.supervisorId, "inspect.heartbeats option supervisorId");
    const database = await this.reads.database();
    return listProcessHeartbeats(database.db, database.clock.now(), threshold, supervisorId);
  }

  /** Every recurring task with its next run and its latest `runs` runs (default 5). */
  async recurringTasks(options: { readonly runs?: number } = {}): Promise<RecurringTaskDetail[]> {
    rejectUnknownKeys(options, new Set(["runs"]), "inspect.recurringTasks option");
    const count = positiveInteger(options.runs ?? 5, "inspect.recurringTasks option runs");
    const tasks = await this.recurring.list();
    const runs = await latestRecurringRuns(
      await this.db(),
      tasks.map((task) => task.key),
      count,
    );
    return tasks.map((task) => ({ ...task, runs: runs.get(task.key) ?? [] }));
  }

  /** Every concurrency key in use or with waiting jobs: limit, free and used slots, running jobs, blocked jobs. */
  async semaphores(): Promise<SemaphoreUsage[]> {
    return listSemaphoreUsage(await this.db(), { blockedPerKey: 10, runningLimit: 5000, limitOf: this.limitOf });
  }

  /**
   * The rate-limit budgets (docs/rate-limits.md), in key order: each one's limit and period, the
   * starts in its current window, the jobs waiting for it, and when it reopens if it is full or
   * closed now (null: it has room). Windows are counted on the database clock.
   */
  async rateLimits(options: RateLimitsOptions = {}): Promise<RateBudgetUsage[]> {
    rejectUnknownKeys(options, RATE_LIMITS_KEYS, "inspect.rateLimits option");
    const limit = positiveInteger(options.limit ?? 100, "inspect.rateLimits option limit");
    if (limit > 1000)
      throw new ConfigurationError(`inspect.rateLimits option limit must be at most 1000, got ${limit}`);
    const database = await this.reads.database();
    return listRateBudgets(database.db, database.clock.now(), limit);
  }

  /** Jobs finished and failed per bucket (default: per minute over the last hour), oldest first. */
  async throughput(options: ThroughputOptions = {}): Promise<ThroughputBucket[]> {
    rejectUnknownKeys(options, THROUGHPUT_KEYS, "inspect.throughput option");
    const buckets = positiveInteger(options.buckets ?? 60, "inspect.throughput option buckets");
    const bucketMs = positiveInteger(options.bucketMs ?? 60_000, "inspect.throughput option bucketMs");
    if (buckets > 240)
      throw new ConfigurationError(`inspect.throughput option buckets must be at most 240, got ${buckets}`);
    if (bucketMs < 1000)
      throw new ConfigurationError(`inspect.throughput option bucketMs must be at least 1000, got ${bucketMs}`);
    return throughputBuckets(await this.db(), new Date(), buckets, bucketMs);
  }

  /**
   * Per queue, the jobs enqueued, finished and failed for good over the last `windowMs` (default
   * the last 10 whole seconds; the second now running is left out), for rates such as
   * `firm-queue top`'s. Reads only the window's rows (see `models/queue-throughput.ts`); queues
   * with no activity in the window are left out.
   */
  async queueThroughput(
    options: QueueThroughputOptions = {},
  ): Promise<{ readonly start: Date; readonly end: Date; readonly queues: QueueThroughput[] }> {
    rejectUnknownKeys(options, QUEUE_THROUGHPUT_KEYS, "inspect.queueThroughput option");
    const windowMs = positiveInteger(options.windowMs ?? 10_000, "inspect.queueThroughput option windowMs");
    const upTo = positiveInteger(options.enqueuedUpTo ?? 100_000, "inspect.queueThroughput option enqueuedUpTo");
    if (windowMs < 1000 || windowMs > 3_600_000)
      throw new ConfigurationError(
        `inspect.queueThroughput option windowMs must be from 1000 to 3600000, got ${windowMs}`,
      );
    if (upTo > 1_000_000)
      throw new ConfigurationError(`inspect.queueThroughput option enqueuedUpTo must be at most 1000000, got ${upTo}`);
    const end = new Date(Math.floor(Date.now() / 1000) * 1000);
    const start = new Date(end.getTime() - windowMs);
    return { start, end, queues: await queueThroughput(await this.db(), { start, end }, upTo) };
  }

  private async db() {
    return (await this.reads.database()).db;
  }
}

/** The state and filters shared by `jobs()` and `count()`, checked. */
function checkListing(
  options: ListJobsOptions | CountJobsOptions,
  keys: ReadonlySet<string>,
  method: string,
): JobListingQuery {
  if (typeof options !== "object" || options === null)
    throw new ConfigurationError(`inspect.${method} needs options such as { state: "failed" }`);
  const what = `inspect.${method} option`;
  rejectUnknownKeys(options, keys, what);
  if (typeof options.state !== "string" || !JOB_STATES.has(options.state)) {
    throw new ConfigurationError(
      `${what} state must be one of ${[...JOB_STATES].join(", ")}, got ${shown(options.state)}`,
    );
  }
  return {
    state: options.state,
    ...(options.queue !== undefined ? { queue: checkQueueName(options.queue, `${what} queue`) } : {}),
    ...(options.name !== undefined ? { name: checkJobName(options.name) } : {}),
    ...(options.key !== undefined ? { key: checkKey(options.key, `${what} key`) } : {}),
    ...(options.from !== undefined ? { from: checkDate(options.from, `${what} from`) } : {}),
    ...(options.to !== undefined ? { to: checkDate(options.to, `${what} to`) } : {}),
  };
}

function checkKey(value: unknown, what: string): string {
  if (typeof value !== "string" || value === "")
    throw new ConfigurationError(`${what} must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

function checkDate(value: unknown, what: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime()))
    throw new ConfigurationError(`${what} must be a valid Date, got ${shown(value)}`);
  return value;
}
