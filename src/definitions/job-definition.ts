import type { EnqueueTransaction } from "../database/app-transaction.js";
import { resolveConcurrency, type ConcurrencyOptions, type ResolvedConcurrency } from "./concurrency-options.js";
import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { checkPriority, checkQueueName, rejectUnknownKeys } from "../option-checks.js";
import type { Logger } from "../logger.js";
import { resolveRetryPolicy, type RetryOptions, type RetryPolicy } from "./retry-policy.js";

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
}

/** The function that does a job's work. */
export type JobHandler<Args> = (args: Args, context: JobContext) => unknown;

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
  /**
   * Functions around this job's handler, the first outermost; they run inside the instance's
   * middleware (`firm.use`). See docs/observability.md.
   */
  readonly middleware?: readonly JobMiddleware[];
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
  /** This job's own middleware (none: empty). */
  readonly middleware: readonly JobMiddleware[];
}

const JOB_OPTION_KEYS = new Set(["queue", "priority", "retry", "timeout", "concurrency", "middleware"]);
/** The options `enqueue` accepts; any other key is refused. */
export const ENQUEUE_OPTION_KEYS = new Set(["queue", "priority", "wait", "at", "transaction"]);

/** Check `defineJob` options and fill in defaults; unknown keys and bad values name themselves. */
export function resolveJobOptions(name: string, options: JobOptions | undefined): ResolvedJobOptions {
  rejectUnknownKeys(options ?? {}, JOB_OPTION_KEYS, `defineJob("${name}") option`);
  return Object.freeze({
    queue: checkQueueName(options?.queue ?? "default", `defineJob("${name}") option queue`),
    priority: checkPriority(options?.priority ?? 0, `defineJob("${name}") option priority`),
    retry: resolveRetryPolicy(options?.retry, `defineJob("${name}")`),
    timeout: resolveTimeout(options?.timeout, `defineJob("${name}") option timeout`),
    concurrency: resolveConcurrency(name, options?.concurrency),
    middleware:
      options?.middleware === undefined
        ? NO_MIDDLEWARE
        : checkMiddleware(options.middleware, `defineJob("${name}") option middleware`),
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
    throw new ConfigurationError(`${what} must be from 1 ms to about 24 days, got ${JSON.stringify(timeout)}`);
  return ms;
}
