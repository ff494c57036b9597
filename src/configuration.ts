import { toMilliseconds, type Duration } from "./duration.js";
import { ConfigurationError } from "./errors.js";
import { consoleLogger, isLogLevel, type Logger, type LogLevel } from "./logger.js";
import { rejectUnknownKeys } from "./job-definition.js";
import { QueueSelector } from "./models/queue-selector.js";
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
  /** Most database connections this instance opens (PostgreSQL, MySQL). Default 10. */
  readonly poolSize?: number;
  /** Where to log; default one line per event on stderr. */
  readonly logger?: Logger;
  /** Least severe level the default logger prints. Default env `FIRM_QUEUE_LOG_LEVEL`, then `info`. */
  readonly logLevel?: LogLevel;
}

/** {@link FirmQueueOptions} checked, with every default filled in. */
export interface ResolvedOptions {
  readonly databaseUrl: string;
  readonly preserveFinishedJobs: boolean;
  readonly poolSize: number;
  readonly logger: Logger;
}

export const DEFAULT_DATABASE_URL = "sqlite:firm-queue.sqlite3";
const OPTION_KEYS = new Set(["databaseUrl", "preserveFinishedJobs", "poolSize", "logger", "logLevel"]);

export function resolveOptions(options: FirmQueueOptions = {}): ResolvedOptions {
  rejectUnknownKeys(options, OPTION_KEYS, "FirmQueue option");
  const logLevel = options.logLevel ?? process.env.FIRM_QUEUE_LOG_LEVEL ?? "info";
  if (!isLogLevel(logLevel)) throw new ConfigurationError(`logLevel must be debug, info, warn or error, got ${JSON.stringify(logLevel)}`);
  return Object.freeze({
    databaseUrl: options.databaseUrl ?? process.env.FIRM_QUEUE_DATABASE_URL ?? DEFAULT_DATABASE_URL,
    preserveFinishedJobs: checkBoolean(options.preserveFinishedJobs ?? true, "preserveFinishedJobs"),
    poolSize: positiveInteger(options.poolSize ?? 10, "poolSize"),
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
}

/** A dispatcher in `firm.start({ dispatchers })`. */
export interface DispatcherOptions {
  /** How long to sleep when nothing is due. Default 1 s. */
  readonly pollingInterval?: Duration;
  /** Scheduled jobs promoted per transaction. Default 500. */
  readonly batchSize?: number;
}

/** Options of `firm.start()`. */
export interface StartOptions {
  /** `"async"`: every role in this process. */
  readonly mode?: "async";
  /** Default: one worker on `"*"`. */
  readonly workers?: readonly WorkerOptions[];
  /** Default: one dispatcher. */
  readonly dispatchers?: readonly DispatcherOptions[];
  /** How long a graceful stop waits for running jobs before putting them back. Default 5 s. */
  readonly shutdownTimeout?: Duration;
  /** How often each process refreshes its row. Default 60 s. */
  readonly processHeartbeatInterval?: Duration;
  /** Recurring tasks, by key. Declaring them (even `{}`) runs a scheduler that syncs them at start. */
  readonly recurring?: RecurringTasksOptions;
  /** Scheduler settings; giving them runs a scheduler even without `recurring`. */
  readonly scheduler?: SchedulerOptions;
}

export interface ResolvedWorker {
  readonly queues: string | readonly string[];
  readonly concurrency: number;
  readonly pollingInterval: number;
}

export interface ResolvedDispatcher {
  readonly pollingInterval: number;
  readonly batchSize: number;
}

export interface ResolvedStartOptions {
  readonly mode: "async";
  readonly workers: readonly ResolvedWorker[];
  readonly dispatchers: readonly ResolvedDispatcher[];
  readonly shutdownTimeout: number;
  readonly processHeartbeatInterval: number;
  /** Null: this start runs no scheduler. The `recurring` tasks are checked by `resolveRecurringTasks`. */
  readonly scheduler: SchedulerSettings | null;
}

const START_KEYS = new Set(["mode", "workers", "dispatchers", "shutdownTimeout", "processHeartbeatInterval", "recurring", "scheduler"]);
const WORKER_KEYS = new Set(["queues", "concurrency", "pollingInterval"]);
const DISPATCHER_KEYS = new Set(["pollingInterval", "batchSize"]);

export function resolveStartOptions(options: StartOptions = {}): ResolvedStartOptions {
  rejectUnknownKeys(options, START_KEYS, "start option");
  const mode = options.mode ?? "async";
  if (mode !== "async") throw new ConfigurationError(`start option mode must be "async", got ${JSON.stringify(mode)}`);
  const workers = (options.workers ?? [{}]).map((worker, index) => resolveWorker(worker, `workers[${index}]`));
  const dispatchers = (options.dispatchers ?? [{}]).map((dispatcher, index) => resolveDispatcher(dispatcher, `dispatchers[${index}]`));
  return Object.freeze({
    mode,
    workers,
    dispatchers,
    shutdownTimeout: toMilliseconds(options.shutdownTimeout ?? 5000, "shutdownTimeout"),
    processHeartbeatInterval: positive(toMilliseconds(options.processHeartbeatInterval ?? 60_000, "processHeartbeatInterval"), "processHeartbeatInterval"),
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
  });
}

function resolveDispatcher(dispatcher: DispatcherOptions, where: string): ResolvedDispatcher {
  rejectUnknownKeys(dispatcher, DISPATCHER_KEYS, `${where} option`);
  return Object.freeze({
    pollingInterval: positive(toMilliseconds(dispatcher.pollingInterval ?? 1000, `${where}.pollingInterval`), `${where}.pollingInterval`),
    batchSize: positiveInteger(dispatcher.batchSize ?? 500, `${where}.batchSize`),
  });
}

export function positiveInteger(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new ConfigurationError(`${what} must be a whole number of at least 1, got ${JSON.stringify(value)}`);
  }
  return value;
}

function positive(value: number, what: string): number {
  if (value <= 0) throw new ConfigurationError(`${what} must be more than 0`);
  return value;
}

function checkBoolean(value: unknown, what: string): boolean {
  if (typeof value !== "boolean") throw new ConfigurationError(`${what} must be true or false, got ${JSON.stringify(value)}`);
  return value;
}
