import type { EnqueueTransaction } from "../database/app-transaction.js";
import { resolveConcurrency, type ConcurrencyOptions, type ResolvedConcurrency } from "./concurrency-options.js";
import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { checkPriority, checkQueueName, rejectUnknownKeys } from "../option-checks.js";
import type { Logger } from "../logger.js";
import { resolveRetryPolicy, type RetryOptions, type RetryPolicy } from "./retry-policy.js";
import { resolveUnique, type ResolvedUnique, type UniqueOptions } from "./unique-options.js";

/** What a handler learns about the job it runs. */
export interface JobContext {
  readonly jobId: number;
  /** The job's name, as given to `defineJob`. */
  readonly name: string;
  readonly queue: string;
  readonly priority: number;
  /** 1 for the first attempt, 2 for the first retry, … */
  readonly attempt: number;
  readonly enqueuedAt: Date;
  /**
   * Fires when the worker shuts down (a handler that stops early is run again later), or when the
   * definition's `timeout` passes (`signal.reason` is then a TimeoutError and the attempt failed).
   */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /**
   * Record how far the job has got: any JSON value up to 4 KiB (a number, `{ done, total }`…),
   * shown by `getJob`, `firm.inspect` and the dashboard. Returns at once; the latest value is
   * written a moment later (at most twice a second per worker). A value that cannot be stored
   * throws a ResultNotSerializableError.
   */
  progress(value: unknown): void;
}

/** The function that does a job's work. */
export type JobHandler<Args> = (args: Args, context: JobContext) => unknown;

/** Options given to `defineJob`. `Args` is the job's argument type. */
// biome-ignore lint/suspicious/noExplicitAny: an unannotated definition accepts any arguments (variance of the default)
export interface JobOptions<Args = any> {
  /** Queue the job goes to unless `enqueue` says otherwise. Default `"default"`. */
  readonly queue?: string;
  /** Smaller runs first. Default 0. */
  readonly priority?: number;
  /** What to do when an attempt fails: how many attempts, how long between them, which errors. */
  readonly retry?: RetryOptions;
  /**
   * Longest an attempt may run. Past it the handler's AbortSignal fires and the attempt fails with
   * a TimeoutError (retried per `retry`). Default: no limit.
   */
  readonly timeout?: Duration;
  /** Limit how many jobs with the same key run at once (see docs/concurrency.md). */
  readonly concurrency?: ConcurrencyOptions<Args>;
  /** Make the job unique by a key: a new job with a held key is skipped or replaces the waiting one (see docs/jobs.md). */
  readonly unique?: UniqueOptions<Args>;
}

/** Options for one `enqueue` call. */
export interface EnqueueOptions {
  readonly queue?: string;
  readonly priority?: number;
  /** Run no earlier than this long from now. */
  readonly wait?: Duration;
  /** Run no earlier than this time. */
  readonly at?: Date;
  /**
   * The job's unique key, instead of the one the definition's `unique.key` computes; held in the
   * definition's `unique.mode` (`"waiting"` when it has none). See docs/jobs.md.
   */
  readonly key?: string;
  /**
   * The application's open transaction on the same database: the job is written inside it, so
   * it exists only if that transaction commits. A Kysely transaction (any 0.28.x) as is; other
   * clients wrapped with `fromPg`, `fromMysql2`, `fromBetterSqlite3`, `fromKnex` or `fromDrizzle`.
   */
  readonly transaction?: EnqueueTransaction;
}

/** A job definition's options with every default filled in. */
export interface ResolvedJobOptions {
  readonly queue: string;
  readonly priority: number;
  readonly retry: RetryPolicy;
  /** Milliseconds, or null for no limit. */
  readonly timeout: number | null;
  /** Null when the job has no concurrency limit. */
  readonly concurrency: ResolvedConcurrency | null;
  /** Null when the job has no `unique` option. */
  readonly unique: ResolvedUnique | null;
}

const JOB_OPTION_KEYS = new Set(["queue", "priority", "retry", "timeout", "concurrency", "unique"]);
/** The options `enqueue` accepts; any other key is refused. */
export const ENQUEUE_OPTION_KEYS = new Set(["queue", "priority", "wait", "at", "key", "transaction"]);

/** Check `defineJob` options and fill in defaults; unknown keys and bad values name themselves. */
export function resolveJobOptions(name: string, options: JobOptions | undefined): ResolvedJobOptions {
  rejectUnknownKeys(options ?? {}, JOB_OPTION_KEYS, `defineJob("${name}") option`);
  return Object.freeze({
    queue: checkQueueName(options?.queue ?? "default", `defineJob("${name}") option queue`),
    priority: checkPriority(options?.priority ?? 0, `defineJob("${name}") option priority`),
    retry: resolveRetryPolicy(options?.retry, `defineJob("${name}")`),
    timeout: resolveTimeout(options?.timeout, `defineJob("${name}") option timeout`),
    concurrency: resolveConcurrency(name, options?.concurrency),
    unique: resolveUnique(name, options?.unique),
  });
}

function resolveTimeout(timeout: Duration | undefined, what: string): number | null {
  if (timeout === undefined) return null;
  const ms = toMilliseconds(timeout, what);
  // setTimeout cannot wait longer than this; a longer timeout would fire at once.
  if (ms < 1 || ms > 2 ** 31 - 1)
    throw new ConfigurationError(`${what} must be from 1 ms to about 24 days, got ${JSON.stringify(timeout)}`);
  return ms;
}
