import { toMilliseconds, type Duration } from "./duration.js";
import { ConfigurationError } from "./errors.js";
import { consoleLogger, isLogLevel, type Logger, type LogLevel } from "./logger.js";
import { rejectUnknownKeys } from "./job-definition.js";
import { QueueSelector } from "./models/queue-selector.js";
import type { LifecycleHooks } from "./processes/hooks.js";
import type { RecurringTasksOptions } from "./recurring/config.js";
import { resolveSchedulerOptions, type SchedulerOptions } from "./recurring/scheduler-options.js";
import type { SchedulerSettings } from "./scheduler.js";

/** Options of `new FirmQueue(...)`. */
export interface FirmQueueOptions {
  /**
   * `sqlite:path.sqlite3`, `postgres://…` or `mysql://…`. Defaults to env
   * `FIRM_QUEUE_DATABASE_URL`, then `sqlite:firm-queue.sqlite3`.
   */
  readonly databaseUrl?: string;
  /** Keep finished jobs (with `finished_at`) instead of deleting them. Default true. */
  readonly preserveFinishedJobs?: boolean;
  /**
   * The dispatcher deletes finished jobs older than this (in small batches), and it is the
   * default `olderThan` of `clearFinishedJobs()`. `false` keeps them forever. Default 1 day.
   */
  readonly clearFinishedJobsAfter?: Duration | false;
  /**
   * Most database connections this instance's pool opens (PostgreSQL, MySQL). Default: derived
   * from what the process runs (see docs/scaling.md: 2 for a fork-mode supervisor, 3 +
   * ceil(concurrency / 4) for a worker, …; 10 for a process that only enqueues).
   */
  readonly poolSize?: number;
  /**
   * PostgreSQL: where the one connection that LISTENs for new jobs goes, when it must not be
   * `databaseUrl` (a transaction pooler such as PgBouncer cannot hold a LISTEN: point
   * `databaseUrl` at the pooler and this at the server). Default env `FIRM_QUEUE_LISTEN_URL`,
   * then `databaseUrl`.
   */
  readonly listenUrl?: string;
  /**
   * Longest wait for the database to answer one statement; past it the connection is closed as
   * lost and the statement fails with DatabaseTimeoutError. Keeps a host whose network went
   * silent from hanging for the kernel's 15 minutes. Keep it below `processAliveThreshold`.
   * Default 30 s; `false` for none.
   */
  readonly queryTimeout?: Duration | false;
  /** Where to log; default one line per event on stderr. */
  readonly logger?: Logger;
  /** Least severe level the default logger prints. Default env `FIRM_QUEUE_LOG_LEVEL`, then `info`. */
  readonly logLevel?: LogLevel;
  /** Lifecycle hooks (see `firm.addHooks`). */
  readonly hooks?: LifecycleHooks;
}

/** {@link FirmQueueOptions} checked, with every default filled in. */
export interface ResolvedOptions {
  readonly databaseUrl: string;
  readonly preserveFinishedJobs: boolean;
  /** Milliseconds, or null for never. */
  readonly clearFinishedJobsAfter: number | null;
  /** Null: derived from the roles the process runs. */
  readonly poolSize: number | null;
  readonly listenUrl: string | undefined;
  /** Milliseconds, or null for none. */
  readonly queryTimeout: number | null;
  readonly logger: Logger;
}

export const DEFAULT_DATABASE_URL = "sqlite:firm-queue.sqlite3";
const OPTION_KEYS = new Set([
  "databaseUrl",
  "listenUrl",
  "preserveFinishedJobs",
  "clearFinishedJobsAfter",
  "poolSize",
  "queryTimeout",
  "logger",
  "logLevel",
  "hooks",
]);

export function resolveOptions(options: FirmQueueOptions = {}): ResolvedOptions {
  rejectUnknownKeys(options, OPTION_KEYS, "FirmQueue option");
  const logLevel = options.logLevel ?? process.env.FIRM_QUEUE_LOG_LEVEL ?? "info";
  if (!isLogLevel(logLevel)) throw new ConfigurationError(`logLevel must be debug, info, warn or error, got ${JSON.stringify(logLevel)}`);
  return Object.freeze({
    databaseUrl: options.databaseUrl ?? process.env.FIRM_QUEUE_DATABASE_URL ?? DEFAULT_DATABASE_URL,
    preserveFinishedJobs: checkBoolean(options.preserveFinishedJobs ?? true, "preserveFinishedJobs"),
    clearFinishedJobsAfter: options.clearFinishedJobsAfter === false ? null : toMilliseconds(options.clearFinishedJobsAfter ?? "1d", "clearFinishedJobsAfter"),
    poolSize: options.poolSize === undefined ? null : positiveInteger(options.poolSize, "poolSize"),
    listenUrl: options.listenUrl ?? (process.env.FIRM_QUEUE_LISTEN_URL || undefined),
    queryTimeout: options.queryTimeout === false ? null : positive(toMilliseconds(options.queryTimeout ?? 30_000, "queryTimeout"), "queryTimeout"),
    logger: options.logger ?? consoleLogger(logLevel),
  });
}

/** A worker in `firm.start({ workers })`. */
export interface WorkerOptions {
  /** `"*"`, a queue name, `prefix*`, or a list of those. Default `"*"`. */
  readonly queues?: string | readonly string[];
  /** Jobs run at once by this worker. Default 3. */
  readonly concurrency?: number;
  /** How long to sleep when the queues are empty. Default 100 ms. */
  readonly pollingInterval?: Duration;
  /** How many copies of this worker to run (each its own process in fork mode). Default 1. */
  readonly processes?: number;
}

/** A dispatcher in `firm.start({ dispatchers })`. */
export interface DispatcherOptions {
  /** How long to sleep when nothing is due. Default 1 s. */
  readonly pollingInterval?: Duration;
  /** Scheduled jobs promoted per transaction. Default 500. */
  readonly batchSize?: number;
  /** Least time between two passes deleting old finished jobs (`clearFinishedJobsAfter`). Default 5 min. */
  readonly clearFinishedJobsInterval?: Duration;
  /** Finished jobs deleted per transaction. Default 500. */
  readonly clearFinishedJobsBatchSize?: number;
  /**
   * How often to run concurrency maintenance: delete expired semaphores, then unblock jobs
   * whose key has a free slot. Default 10 minutes (and once at start); `false` turns it off.
   */
  readonly concurrencyMaintenanceInterval?: Duration | false;
}

/** Options of `firm.start()`. */
export interface StartOptions {
  /**
   * `"async"` (the default here): every role runs in this process. `"fork"`: one child process
   * per worker (times `processes`) and per dispatcher, restarted when it dies.
   */
  readonly mode?: "async" | "fork";
  /**
   * Fork mode: the modules that define your jobs, imported by each child (as `--require` does
   * for the CLI; relative paths from the current directory). Default: the modules that called
   * `new FirmQueue()` and `defineJob()`.
   */
  readonly require?: readonly string[];
  /** Default: one worker on `"*"`. */
  readonly workers?: readonly WorkerOptions[];
  /** Default: one dispatcher. */
  readonly dispatchers?: readonly DispatcherOptions[];
  /** How long a graceful stop waits for running jobs before putting them back. Default 5 s. */
  readonly shutdownTimeout?: Duration;
  /** How often each process refreshes its row. Default 60 s. */
  readonly processHeartbeatInterval?: Duration;
  /**
   * A process whose heartbeat is older than this is dead: supervisors prune it and fail its
   * claims. Default 5 min; must exceed `processHeartbeatInterval`.
   */
  readonly processAliveThreshold?: Duration;
  /** Recurring tasks, by key. Declaring them (even `{}`) runs a scheduler that syncs them at start. */
  readonly recurring?: RecurringTasksOptions;
  /** Scheduler settings; giving them runs a scheduler even without `recurring`. */
  readonly scheduler?: SchedulerOptions;
}

export interface ResolvedWorker {
  readonly queues: string | readonly string[];
  readonly concurrency: number;
  readonly pollingInterval: number;
  readonly processes: number;
}

export interface ResolvedDispatcher {
  readonly pollingInterval: number;
  readonly batchSize: number;
  readonly clearFinishedJobsInterval: number;
  readonly clearFinishedJobsBatchSize: number;
  /** Milliseconds, or false when maintenance is off. */
  readonly concurrencyMaintenanceInterval: number | false;
}

export interface ResolvedStartOptions {
  readonly mode: "async" | "fork";
  readonly require: readonly string[] | undefined;
  readonly workers: readonly ResolvedWorker[];
  readonly dispatchers: readonly ResolvedDispatcher[];
  readonly shutdownTimeout: number;
  readonly processHeartbeatInterval: number;
  readonly processAliveThreshold: number;
  /** Null: this start runs no scheduler. The `recurring` tasks are checked by `resolveRecurringTasks`. */
  readonly scheduler: SchedulerSettings | null;
}

const START_KEYS = new Set([
  "mode",
  "require",
  "workers",
  "dispatchers",
  "shutdownTimeout",
  "processHeartbeatInterval",
  "processAliveThreshold",
  "recurring",
  "scheduler",
]);
const WORKER_KEYS = new Set(["queues", "concurrency", "pollingInterval", "processes"]);
const DISPATCHER_KEYS = new Set(["pollingInterval", "batchSize", "clearFinishedJobsInterval", "clearFinishedJobsBatchSize", "concurrencyMaintenanceInterval"]);
const DEFAULT_CONCURRENCY_MAINTENANCE_INTERVAL = 600_000;

export function resolveStartOptions(options: StartOptions = {}): ResolvedStartOptions {
  rejectUnknownKeys(options, START_KEYS, "start option");
  const mode = options.mode ?? "async";
  if (mode !== "async" && mode !== "fork") throw new ConfigurationError(`start option mode must be "fork" or "async", got ${JSON.stringify(mode)}`);
  const processHeartbeatInterval = positive(toMilliseconds(options.processHeartbeatInterval ?? 60_000, "processHeartbeatInterval"), "processHeartbeatInterval");
  const processAliveThreshold = positive(toMilliseconds(options.processAliveThreshold ?? 300_000, "processAliveThreshold"), "processAliveThreshold");
  if (processAliveThreshold <= processHeartbeatInterval) {
    throw new ConfigurationError(
      `processAliveThreshold (${processAliveThreshold} ms) must be longer than processHeartbeatInterval (${processHeartbeatInterval} ms), ` +
        "or live processes would be pruned as dead",
    );
  }
  const workers = list(options.workers ?? [{}], "workers").map((worker, index) => resolveWorker(worker, `workers[${index}]`));
  const dispatchers = list(options.dispatchers ?? [{}], "dispatchers").map((dispatcher, index) => resolveDispatcher(dispatcher, `dispatchers[${index}]`));
  return Object.freeze({
    mode,
    require: resolveRequire(options.require),
    workers,
    dispatchers,
    shutdownTimeout: toMilliseconds(options.shutdownTimeout ?? 5000, "shutdownTimeout"),
    processHeartbeatInterval,
    processAliveThreshold,
    scheduler: resolveSchedulerOptions(options.scheduler, options.recurring !== undefined),
  });
}

function resolveWorker(worker: WorkerOptions, where: string): ResolvedWorker {
  rejectUnknownKeys(worker, WORKER_KEYS, `${where} option`);
  const queues = worker.queues ?? "*";
  new QueueSelector(queues); // throws a ConfigurationError for an empty selection
  return Object.freeze({
    queues,
    concurrency: positiveInteger(worker.concurrency ?? 3, `${where}.concurrency`),
    pollingInterval: positive(toMilliseconds(worker.pollingInterval ?? 100, `${where}.pollingInterval`), `${where}.pollingInterval`),
    processes: positiveInteger(worker.processes ?? 1, `${where}.processes`),
  });
}

function resolveDispatcher(dispatcher: DispatcherOptions, where: string): ResolvedDispatcher {
  rejectUnknownKeys(dispatcher, DISPATCHER_KEYS, `${where} option`);
  return Object.freeze({
    pollingInterval: positive(toMilliseconds(dispatcher.pollingInterval ?? 1000, `${where}.pollingInterval`), `${where}.pollingInterval`),
    batchSize: positiveInteger(dispatcher.batchSize ?? 500, `${where}.batchSize`),
    clearFinishedJobsInterval: positive(
      toMilliseconds(dispatcher.clearFinishedJobsInterval ?? 300_000, `${where}.clearFinishedJobsInterval`),
      `${where}.clearFinishedJobsInterval`,
    ),
    clearFinishedJobsBatchSize: positiveInteger(dispatcher.clearFinishedJobsBatchSize ?? 500, `${where}.clearFinishedJobsBatchSize`),
    concurrencyMaintenanceInterval: maintenanceInterval(dispatcher.concurrencyMaintenanceInterval, `${where}.concurrencyMaintenanceInterval`),
  });
}

function maintenanceInterval(value: Duration | false | undefined, what: string): number | false {
  if (value === false) return false;
  return positive(toMilliseconds(value ?? DEFAULT_CONCURRENCY_MAINTENANCE_INTERVAL, what), what);
}

export function positiveInteger(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new ConfigurationError(`${what} must be a whole number of at least 1, got ${JSON.stringify(value)}`);
  }
  return value;
}

function list<T>(value: readonly T[], what: string): readonly T[] {
  if (!Array.isArray(value)) throw new ConfigurationError(`${what} must be a list, got ${JSON.stringify(value)}`);
  return value;
}

function resolveRequire(paths: unknown): readonly string[] | undefined {
  if (paths === undefined) return undefined;
  if (!Array.isArray(paths) || paths.length === 0 || !paths.every((path) => typeof path === "string" && path !== "")) {
    throw new ConfigurationError(`start option require must be a non-empty list of module paths, got ${JSON.stringify(paths)}`);
  }
  return Object.freeze([...paths]);
}

function positive(value: number, what: string): number {
  if (value <= 0) throw new ConfigurationError(`${what} must be more than 0`);
  return value;
}

function checkBoolean(value: unknown, what: string): boolean {
  if (typeof value !== "boolean") throw new ConfigurationError(`${what} must be true or false, got ${JSON.stringify(value)}`);
  return value;
}
