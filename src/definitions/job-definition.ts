import type { EnqueueTransaction } from "../database/app-transaction.js";
import { resolveConcurrency, type ConcurrencyOptions, type ResolvedConcurrency } from "./concurrency-options.js";
import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { checkPriority, checkQueueName, rejectUnknownKeys } from "../option-checks.js";
import type { Logger } from "../logger.js";
import { resolveRetryPolicy, type RetryOptions, type RetryPolicy } from "./retry-policy.js";
import type { StandardSchema } from "../standard-schema.js";
import { checkSchema } from "./argument-validation.js";
import type { DependencyFailurePolicy } from "./dependency-options.js";

/**
 * A value job arguments can hold (they are stored as JSON, with Date and bigint kept): the
 * argument type of a job declared without one, so `enqueue(new Map())` or a function is a type
 * error rather than `any`. Declare the real type (`declareJob<{ to: string }>`) or a `schema`.
 */
export type JobArguments =
  | string
  | number
  | boolean
  | bigint
  | Date
  | null
  | readonly JobArguments[]
  | { readonly [key: string]: JobArguments | undefined };
import { resolveUnique, type ResolvedUnique, type UniqueOptions } from "./unique-options.js";
import { shown } from "../shown-value.js";
import { resolveRateLimit, type RateLimitOptions, type ResolvedRateLimit } from "./rate-limit-options.js";

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
  /** The instance's logger, bound to this job: every line carries `jobId`, `job`, `queue` and `attempt`. */
  readonly logger: Logger;
  /**
   * Record how far the job has got: any JSON value up to 4 KiB (a number, `{ done, total }`…),
   * shown by `getJob`, `firm.inspect` and the dashboard. Returns at once; the latest value is
   * written a moment later (at most twice a second per worker). A value that cannot be stored
   * throws a ResultNotSerializableError.
   */
  progress(value: unknown): void;
  /**
   * The jobs this one depends on (`dependsOn`, or its children in a flow), in that order, with
   * how each ended and what it returned. Empty for a job without dependencies. Read from the
   * database on each call; kept even when the dependencies' rows are gone (see docs/workflows.md).
   */
  dependencyResults(): Promise<DependencyResult[]>;
  /**
   * The batch the job belongs to (`firm.batch`), or whose callback it is; undefined otherwise.
   * `add` writes more jobs into it while this one runs: the batch ends only when they have ended
   * too. On a callback's, whose batch has ended, `add` throws a BatchEndedError.
   */
  readonly batch?: JobBatch | undefined;
}

/** One job of a batch: a declared job's name, its arguments, and `enqueue`'s options (no `transaction`). */
export interface BatchJob {
  readonly name: string;
  /** Values firm-queue can store (absent: null). */
  readonly args?: JobArguments | undefined;
  readonly options?: Omit<EnqueueOptions, "transaction"> | undefined;
}

/** A batch as a handler's `context.batch` sees it. */
export interface JobBatch {
  readonly id: number;
  /** Write jobs into the batch (checked as `firm.batch` checks them); one result each, as `enqueue`'s. */
  add(jobs: readonly BatchJob[]): Promise<BatchJobAdded[]>;
}

/** What `context.batch.add` did with one job: an enqueue result (`dropped` has no id). */
export interface BatchJobAdded {
  readonly status: "created" | "duplicate" | "replaced" | "dropped";
  readonly id: number | null;
}

/** One dependency of a job, as `context.dependencyResults()` reports it. */
export interface DependencyResult {
  readonly id: number;
  readonly name: string;
  /** How it ended: `finished`, `failed` or `cancelled`; `null` if it has not ended (a job run by hand). */
  readonly state: "finished" | "failed" | "cancelled" | null;
  /** What its handler returned, decoded (null when it returned nothing or did not finish). */
  readonly result: unknown;
}

/**
 * The function that does a job's work. `Return` is what it returns (or resolves to): stored as
 * the job's result, and the type of `result` in what `job.get(id)` reads.
 */
export type JobHandler<Args, Return = unknown> = (args: Args, context: JobContext) => Return;

/** What a middleware sees of the job it wraps: the handler's context, plus the job's arguments. */
export interface MiddlewareContext extends JobContext {
  /** The job's arguments, as the handler receives them. */
  readonly args: unknown;
}

/**
 * A function around a job's handler: `firm.use(middleware)` for every job, or the `middleware`
 * option of `defineJob` for one. Call `next()` to run the rest of the chain (the next middleware,
 * in the end the handler) and await it; it resolves to what the next link returned (the handler's
 * result, if every middleware in between returns what its `next()` gave it) and rejects with what
 * was thrown. A middleware that does not call `next()` stops the chain: the handler does not
 * run, and the attempt ends as the middleware does (resolving: finished; throwing: failed).
 */
export type JobMiddleware = (context: MiddlewareContext, next: () => Promise<unknown>) => unknown;

/** Options given to `defineJob`. `Args` is the job's argument type. */
// biome-ignore lint/suspicious/noExplicitAny: an unannotated definition accepts any arguments (variance of the default)
export interface JobOptions<Args = any> {
  /** Queue the job goes to unless `enqueue` says otherwise. Default `"default"`. */
  readonly queue?: string | undefined;
  /** Smaller runs first. Default 0. */
  readonly priority?: number | undefined;
  /** What to do when an attempt fails: how many attempts, how long between them, which errors. */
  readonly retry?: RetryOptions | undefined;
  /**
   * Longest an attempt may run. Past it the handler's AbortSignal fires and the attempt fails with
   * a TimeoutError (retried per `retry`). Default: no limit.
   */
  readonly timeout?: Duration | undefined;
  /** Limit how many jobs with the same key run at once (see docs/concurrency.md). */
  readonly concurrency?: ConcurrencyOptions<Args> | undefined;
  /**
   * Functions around this job's handler, the first outermost; they run inside the instance's
   * middleware (`firm.use`). See docs/observability.md.
   */
  readonly middleware?: readonly JobMiddleware[] | undefined;
  /**
   * A Standard Schema (zod, valibot, arktype, …) for the arguments: it gives the argument type,
   * and the arguments are validated at enqueue and again before the handler runs.
   */
  readonly schema?: StandardSchema | undefined;
  /** Make the job unique by a key: a new job with a held key is skipped or replaces the waiting one (see docs/jobs.md). */
  readonly unique?: UniqueOptions<Args> | undefined;
  /** At most `limit` starts in any window of `period`, per key or group (see docs/rate-limits.md). */
  readonly rateLimit?: RateLimitOptions<Args> | undefined;
}

/** The options one job of an enqueue may have: where it goes, in what order, and when it runs. */
export interface JobEnqueueOptions {
  readonly queue?: string | undefined;
  readonly priority?: number | undefined;
  /** Run no earlier than this long from now. */
  readonly wait?: Duration | undefined;
  /** Run no earlier than this time. */
  readonly at?: Date | undefined;
  /**
   * The job's unique key, instead of the one the definition's `unique.key` computes; held in the
   * definition's `unique.mode` (`"waiting"` when it has none). A number is stored as its decimal
   * string. See docs/jobs.md.
   */
  readonly key?: string | number | undefined;
  /**
   * Ids of jobs this one waits for: it stays `pending` until every one of them has ended, then
   * runs (see docs/workflows.md). An id with no job is a JobNotFoundError and nothing is written.
   */
  readonly dependsOn?: readonly number[] | undefined;
  /**
   * What happens when a dependency fails for good or is cancelled: `"cancel"` (the default) cancels
   * this job, and in turn its own dependents; `"run"` runs it anyway once every dependency ended.
   */
  readonly onDependencyFailure?: DependencyFailurePolicy | undefined;
}

/** Options for one `enqueue` call. */
export interface EnqueueOptions extends JobEnqueueOptions {
  /**
   * The application's open transaction on the same database: the job is written inside it, so
   * it exists only if that transaction commits. A Kysely transaction (any 0.28.x) as is; other
   * clients wrapped with `fromPg`, `fromMysql2`, `fromBetterSqlite3`, `fromKnex` or `fromDrizzle`.
   */
  readonly transaction?: EnqueueTransaction | undefined;
}

/** Options of `enqueueAll`: those of `enqueue` for every job, and options of each job. */
export interface EnqueueAllOptions<Args> extends EnqueueOptions {
  /**
   * Options of each job, over the shared ones: a list in the order of the arguments (one entry
   * per job), or a function of each job's arguments and place. The jobs are still written
   * together, with as few statements as when they all share one set of options.
   */
  readonly each?:
    | readonly (JobEnqueueOptions | undefined)[]
    | ((args: Args, index: number) => JobEnqueueOptions | undefined)
    | undefined;
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
  /** This job's own middleware (none: empty). */
  readonly middleware: readonly JobMiddleware[];
  /** The declaration's schema; null when the arguments are not validated. */
  readonly schema: StandardSchema | null;
  /** Null when the job has no `unique` option. */
  readonly unique: ResolvedUnique | null;
  /** Null when the job has no `rateLimit` option. */
  readonly rateLimit: ResolvedRateLimit | null;
}

const JOB_OPTION_KEYS = new Set([
  "queue",
  "priority",
  "retry",
  "timeout",
  "concurrency",
  "middleware",
  "schema",
  "unique",
  "rateLimit",
]);
/** The options one job of a bulk enqueue may set for itself. */
export const JOB_ENQUEUE_OPTION_KEYS = new Set([
  "queue",
  "priority",
  "wait",
  "at",
  "key",
  "dependsOn",
  "onDependencyFailure",
]);
/** The options `enqueue` accepts; any other key is refused. */
export const ENQUEUE_OPTION_KEYS = new Set([...JOB_ENQUEUE_OPTION_KEYS, "transaction"]);

/** Check `defineJob` options and fill in defaults; unknown keys and bad values name themselves. */
export function resolveJobOptions(
  name: string,
  options: JobOptions | undefined,
  /** The call the options were given to, for error messages. */
  by: "defineJob" | "declareJob" = "defineJob",
): ResolvedJobOptions {
  const at = `${by}("${name}")`;
  rejectUnknownKeys(options ?? {}, JOB_OPTION_KEYS, `${at} option`);
  return Object.freeze({
    queue: checkQueueName(options?.queue ?? "default", `${at} option queue`),
    priority: checkPriority(options?.priority ?? 0, `${at} option priority`),
    retry: resolveRetryPolicy(options?.retry, at),
    timeout: resolveTimeout(options?.timeout, `${at} option timeout`),
    concurrency: resolveConcurrency(name, options?.concurrency),
    middleware:
      options?.middleware === undefined
        ? NO_MIDDLEWARE
        : checkMiddleware(options.middleware, `${at} option middleware`),
    schema: checkSchema(options?.schema, `${at} option schema`),
    unique: resolveUnique(name, options?.unique),
    rateLimit: resolveRateLimit(name, options?.rateLimit, by),
  });
}

/** Check a list of middleware given as an option; returns a frozen copy. */
export function checkMiddleware(value: unknown, what: string): readonly JobMiddleware[] {
  if (!Array.isArray(value)) throw new ConfigurationError(`${what} must be an array of functions`);
  value.forEach((middleware, index) => {
    if (typeof middleware !== "function")
      throw new ConfigurationError(`${what}[${index}] must be a function (context, next) => …`);
  });
  return Object.freeze([...value]);
}

const NO_MIDDLEWARE: readonly JobMiddleware[] = Object.freeze([]);

function resolveTimeout(timeout: Duration | undefined, what: string): number | null {
  if (timeout === undefined) return null;
  const ms = toMilliseconds(timeout, what);
  // setTimeout cannot wait longer than this; a longer timeout would fire at once.
  if (ms < 1 || ms > 2 ** 31 - 1)
    throw new ConfigurationError(`${what} must be from 1 ms to about 24 days, got ${shown(timeout)}`);
  return ms;
}
