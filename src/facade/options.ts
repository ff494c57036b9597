import { toMilliseconds, toTimerMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError, ReadUrlError, redactUrl } from "../errors.js";
import { parseDatabaseUrl } from "../database/url.js";
import { consoleLogger, isLogFormat, isLogLevel, type LogFormat, type Logger, type LogLevel } from "../logger.js";
import { adaptLogger } from "../logger-adapter.js";
import { checkBoolean, nonNegativeInteger, positive, positiveInteger, rejectUnknownKeys } from "../option-checks.js";
import { queuePatterns } from "../roles/queue-selector.js";
import type { LifecycleHooks } from "../processes/hooks.js";
import type { RecurringTasksOptions } from "../definitions/recurring-task.js";
import { resolveSchedulerOptions, type SchedulerOptions } from "./scheduler-options.js";
import type { ResolvedDispatcher, ResolvedStartOptions, ResolvedWorker } from "../supervisor/settings.js";
import { resolveWorkerExecArgv } from "../supervisor/worker-exec-argv.js";
import { describeHandle, type DatabaseHandle } from "../database/handle.js";
import { resolveDatabaseUrl, checkUrlText, checkSchemaName } from "../database-url-option.js";
import { checkTablePrefix, DEFAULT_TABLE_PREFIX } from "../database/table-prefix.js";
import { shown } from "../shown-value.js";

/** Options of `new FirmQueue(...)`. */
export interface FirmQueueOptions {
  /**
   * `sqlite:path.sqlite3`, `postgres://…` or `mysql://…`. Defaults to env
   * `FIRM_QUEUE_DATABASE_URL`, then `sqlite:firm-queue.sqlite3`.
   */
  readonly databaseUrl?: string | undefined;
  /**
   * A database handle the application already has, used instead of `databaseUrl`: a `pg.Pool`,
   * a `mysql2` pool, a better-sqlite3 `Database` or a Kysely instance. firm-queue never closes
   * it (see docs/integration.md).
   */
  readonly database?: DatabaseHandle | undefined;
  /**
   * PostgreSQL only: where to LISTEN for ready jobs when `database` is a handle firm-queue cannot
   * open a connection of its own from (a Kysely instance), or when the pool goes through a
   * transaction-mode pooler such as PgBouncer, which cannot hold a LISTEN (point `databaseUrl`
   * at the pooler and this at the server). Default env `FIRM_QUEUE_LISTEN_URL`, then the
   * database's own connection settings.
   */
  readonly listenUrl?: string | undefined;
  /**
   * A replica to read from: `firm.inspect` (and so the dashboard, the CLI's listings and the
   * metrics' gauges) reads there, everything that writes or must be fresh (enqueue, claims,
   * `waitFor`, `getJob`, every change) stays on the primary. PostgreSQL (a hot standby) and
   * MariaDB/MySQL (a replica or a Galera node), not SQLite. Reads go to the primary instead while
   * the replica is unreachable, not following, or behind by more than `readMaxLag`;
   * `firm.inspect.replication()` says which and why (docs/high-availability.md). Default env
   * `FIRM_QUEUE_READ_URL`, then none.
   */
  readonly readUrl?: string | undefined;
  /** With `readUrl`: read from the primary while the replica trails it by more than this. Default 30 s. */
  readonly readMaxLag?: Duration | undefined;
  /**
   * PostgreSQL only: the schema that holds firm-queue's tables (created by `migrate` if missing).
   * Default: the connection's `search_path`, normally `public`. Needs a `databaseUrl`.
   */
  readonly schema?: string | undefined;
  /**
   * What the names of firm-queue's tables (and indexes, trigger and NOTIFY channel) start with:
   * `<prefix>jobs`, `<prefix>ready_executions`… 1 to 14 lower-case letters, digits and `_`.
   * Every FirmQueue and `firm-queue` command on the database must use the same one; two
   * prefixes on one database are two independent queues. Default env `FIRM_QUEUE_TABLE_PREFIX`,
   * then `firm_queue_`.
   */
  readonly tablePrefix?: string | undefined;
  /** Keep finished jobs (with `finished_at`) instead of deleting them. Default true. */
  readonly preserveFinishedJobs?: boolean | undefined;
  /**
   * The dispatcher deletes finished jobs older than this (in small batches), and it is the
   * default `olderThan` of `clearFinishedJobs()`. `false` keeps them forever. Default 1 day.
   */
  readonly clearFinishedJobsAfter?: Duration | false | undefined;
  /**
   * How often `waitFor` asks the database about the jobs this process waits for: one query per
   * interval for all of them. On PostgreSQL a notification wakes waiters at once and this poll is
   * the safety net. Default 500 ms.
   */
  readonly waitPollInterval?: Duration | undefined;
  /**
   * Most database connections this instance's pool opens (PostgreSQL, MySQL). Default: derived
   * from what the process runs (see docs/scaling.md: 2 for a fork-mode supervisor, 3 +
   * ceil(concurrency / 4) for a worker, …; 10 for a process that only enqueues).
   */
  readonly poolSize?: number | undefined;
  /**
   * Longest wait for the database to answer one statement; past it the connection is closed as
   * lost and the statement fails with DatabaseTimeoutError. Keeps a host whose network went
   * silent from hanging for the kernel's 15 minutes. Keep it below `processAliveThreshold`.
   * Default 30 s; `false` for none.
   */
  readonly queryTimeout?: Duration | false | undefined;
  /**
   * Where to log; default one line per event on stderr. A `(message, fields)` logger, or a pino
   * or bunyan logger as it is: those take `(fields, message)`, and are recognized and called
   * that way (see docs/observability.md).
   */
  readonly logger?: Logger | undefined;
  /** Least severe level the default logger prints. Default env `FIRM_QUEUE_LOG_LEVEL`, then `info`. */
  readonly logLevel?: LogLevel | undefined;
  /** How the default logger writes: `"text"` or `"json"` (one object per line). Default env `FIRM_QUEUE_LOG_FORMAT`, then `"text"`. */
  readonly logFormat?: LogFormat | undefined;
  /**
   * Log one info line per finished job (failures, retries and discards are always logged, at warn
   * or error). Default env `FIRM_QUEUE_LOG_JOB_OUTCOMES` (`true`/`1`), then false.
   */
  readonly logJobOutcomes?: boolean | undefined;
  /** Lifecycle hooks (see `firm.addHooks`). */
  readonly hooks?: LifecycleHooks | undefined;
}

/** {@link FirmQueueOptions} checked, with every default filled in. */
export interface ResolvedOptions {
  /** The URL firm-queue opens, or for a handle passed as `database`, a description of it. */
  readonly databaseUrl: string;
  readonly database: DatabaseHandle | undefined;
  readonly listenUrl: string | undefined;
  /** The replica `firm.inspect` reads from, or undefined for none. */
  readonly readUrl: string | undefined;
  /** Milliseconds. */
  readonly readMaxLag: number;
  readonly schema: string | undefined;
  readonly tablePrefix: string;
  readonly preserveFinishedJobs: boolean;
  /** Milliseconds, or null for never. */
  readonly clearFinishedJobsAfter: number | null;
  /** Milliseconds between two polls of `waitFor`'s jobs. */
  readonly waitPollInterval: number;
  /** Null: derived from the roles the process runs. */
  readonly poolSize: number | null;
  /** Milliseconds, or null for none. */
  readonly queryTimeout: number | null;
  readonly logger: Logger;
  readonly logJobOutcomes: boolean;
}

/** The database used when nothing else is configured: a SQLite file in the working directory. */
export { DEFAULT_DATABASE_URL } from "../database-url-option.js";
const OPTION_KEYS = new Set([
  "databaseUrl",
  "database",
  "listenUrl",
  "readUrl",
  "readMaxLag",
  "schema",
  "tablePrefix",
  "preserveFinishedJobs",
  "clearFinishedJobsAfter",
  "waitPollInterval",
  "poolSize",
  "queryTimeout",
  "logger",
  "logLevel",
  "logFormat",
  "logJobOutcomes",
  "hooks",
]);

/** Check `new FirmQueue()` options and fill in defaults (environment variables included). */
export function resolveOptions(options: FirmQueueOptions = {}): ResolvedOptions {
  rejectUnknownKeys(options, OPTION_KEYS, "FirmQueue option");
  if (options.database !== undefined && Object.hasOwn(options, "databaseUrl")) {
    throw new ConfigurationError("Pass either databaseUrl or database to new FirmQueue(), not both");
  }
  const logLevel = options.logLevel ?? process.env.FIRM_QUEUE_LOG_LEVEL ?? "info";
  if (!isLogLevel(logLevel))
    throw new ConfigurationError(`logLevel must be debug, info, warn or error, got ${shown(logLevel)}`);
  const logFormat = options.logFormat ?? (process.env.FIRM_QUEUE_LOG_FORMAT || "text");
  if (!isLogFormat(logFormat))
    throw new ConfigurationError(`logFormat must be "text" or "json", got ${shown(logFormat)}`);
  const outcomesFromEnv = process.env.FIRM_QUEUE_LOG_JOB_OUTCOMES;
  const databaseUrl = options.database === undefined ? resolveDatabaseUrl(options) : describeHandle(options.database);
  return Object.freeze({
    databaseUrl,
    database: options.database,
    readUrl: resolveReadUrl(options, options.database === undefined ? databaseUrl : undefined),
    readMaxLag: toMilliseconds(options.readMaxLag ?? 30_000, "readMaxLag"),
    listenUrl:
      options.listenUrl === undefined
        ? process.env.FIRM_QUEUE_LISTEN_URL || undefined
        : checkUrlText(options.listenUrl, "listenUrl"),
    schema: options.schema === undefined ? undefined : checkSchemaName(options.schema),
    tablePrefix: resolveTablePrefix(options),
    preserveFinishedJobs: checkBoolean(options.preserveFinishedJobs ?? true, "preserveFinishedJobs"),
    clearFinishedJobsAfter:
      options.clearFinishedJobsAfter === false
        ? null
        : toMilliseconds(options.clearFinishedJobsAfter ?? "1d", "clearFinishedJobsAfter"),
    waitPollInterval: positive(
      toTimerMilliseconds(options.waitPollInterval ?? 500, "waitPollInterval"),
      "waitPollInterval",
    ),
    poolSize: options.poolSize === undefined ? null : positiveInteger(options.poolSize, "poolSize"),
    queryTimeout:
      options.queryTimeout === false
        ? null
        : positive(toMilliseconds(options.queryTimeout ?? 30_000, "queryTimeout"), "queryTimeout"),
    logger: options.logger === undefined ? consoleLogger(logLevel, logFormat) : adaptLogger(options.logger),
    logJobOutcomes: checkBoolean(
      options.logJobOutcomes ?? (outcomesFromEnv === "true" || outcomesFromEnv === "1"),
      "logJobOutcomes",
    ),
  });
}

/**
 * The `readUrl` option, else env FIRM_QUEUE_READ_URL: a URL of the same kind of database as the
 * primary's `databaseUrl` (checked again on opening when the primary is a handle), never SQLite.
 */
function resolveReadUrl(options: FirmQueueOptions, databaseUrl: string | undefined): string | undefined {
  const given = options.readUrl === undefined ? process.env.FIRM_QUEUE_READ_URL || undefined : options.readUrl;
  if (given === undefined) return undefined;
  const what = options.readUrl === undefined ? "FIRM_QUEUE_READ_URL" : "readUrl";
  const readUrl = checkUrlText(given, what);
  const replica = parseDatabaseUrl(readUrl).dialect;
  if (replica === "sqlite") throw new ReadUrlError(redactUrl(readUrl), "sqlite");
  if (databaseUrl !== undefined) {
    const primary = parseDatabaseUrl(databaseUrl).dialect;
    if (primary === "sqlite") throw new ReadUrlError(redactUrl(readUrl), "sqlite");
    if (primary !== replica) throw new ReadUrlError(redactUrl(readUrl), { primary, replica });
  }
  return readUrl;
}

/** The `tablePrefix` option, else env FIRM_QUEUE_TABLE_PREFIX (set but invalid, empty included, is an error), else the default. */
function resolveTablePrefix(options: FirmQueueOptions): string {
  if (options.tablePrefix !== undefined) return checkTablePrefix(options.tablePrefix);
  const fromEnv = process.env.FIRM_QUEUE_TABLE_PREFIX;
  return fromEnv === undefined ? DEFAULT_TABLE_PREFIX : checkTablePrefix(fromEnv, "FIRM_QUEUE_TABLE_PREFIX");
}

/** A worker in `firm.start({ workers })`. */
export interface WorkerOptions {
  /** `"*"`, a queue name, `prefix*`, or a list of those. Default `"*"`. */
  readonly queues?: string | readonly string[] | undefined;
  /** Jobs run at once by this worker. Default 3. */
  readonly concurrency?: number | undefined;
  /** How long to sleep when the queues are empty. Default 100 ms. */
  readonly pollingInterval?: Duration | undefined;
  /** How many copies of this worker to run (each its own process in fork mode). Default 1. */
  readonly processes?: number | undefined;
  /**
   * Jobs claimed ahead of free slots when there is a backlog, started from memory as slots free
   * up (0: claim only for free slots). Default 20 × concurrency, at most 500. A graceful stop puts
   * them back in line; see docs/internals.md for what a crash means for them.
   */
  readonly prefetch?: number | undefined;
  /**
   * Fork mode: node flags each of this worker's child processes runs with, after the ones the
   * supervisor's process runs with (so these win), e.g. `["--max-semi-space-size=4"]`. `[]` for
   * none. Default none. No effect in async mode.
   */
  readonly execArgv?: readonly string[] | undefined;
}

/** A dispatcher in `firm.start({ dispatchers })`. */
export interface DispatcherOptions {
  /** How long to sleep when nothing is due. Default 1 s. */
  readonly pollingInterval?: Duration | undefined;
  /** Scheduled jobs promoted per transaction. Default 500. */
  readonly batchSize?: number | undefined;
  /** Least time between two passes deleting old finished jobs (`clearFinishedJobsAfter`). Default 5 min. */
  readonly clearFinishedJobsInterval?: Duration | undefined;
  /** Finished jobs deleted per transaction. Default 500. */
  readonly clearFinishedJobsBatchSize?: number | undefined;
  /**
   * How often to run concurrency maintenance: delete expired semaphores, then unblock jobs
   * whose key has a free slot. Default 10 minutes (and once at start); `false` turns it off.
   */
  readonly concurrencyMaintenanceInterval?: Duration | false | undefined;
}

/** Options of `firm.start()`. */
export interface StartOptions {
  /**
   * `"async"` (the default here): every role runs in this process. `"fork"`: one child process
   * per worker (times `processes`) and per dispatcher, restarted when it dies.
   */
  readonly mode?: "async" | "fork" | undefined;
  /**
   * Fork mode: the modules that define your jobs, imported by each child (as `--require` does
   * for the CLI; relative paths from the current directory). Default: the modules that called
   * `new FirmQueue()` and `defineJob()`.
   */
  readonly require?: readonly string[] | undefined;
  /** Default: one worker on `"*"`. */
  readonly workers?: readonly WorkerOptions[] | undefined;
  /** Default: one dispatcher. */
  readonly dispatchers?: readonly DispatcherOptions[] | undefined;
  /** How long a graceful stop waits for running jobs before putting them back. Default 5 s. */
  readonly shutdownTimeout?: Duration | undefined;
  /** How often each process refreshes its row. Default 60 s. */
  readonly processHeartbeatInterval?: Duration | undefined;
  /**
   * A process whose heartbeat is older than this is dead: supervisors prune it and fail its
   * claims. Default 5 min; must exceed `processHeartbeatInterval`.
   */
  readonly processAliveThreshold?: Duration | undefined;
  /** Recurring tasks, by key. Declaring them (even `{}`) runs a scheduler that syncs them at start. */
  readonly recurring?: RecurringTasksOptions | undefined;
  /** Scheduler settings; giving them runs a scheduler even without `recurring`. */
  readonly scheduler?: SchedulerOptions | undefined;
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
const WORKER_KEYS = new Set(["queues", "concurrency", "pollingInterval", "processes", "prefetch", "execArgv"]);
const DISPATCHER_KEYS = new Set([
  "pollingInterval",
  "batchSize",
  "clearFinishedJobsInterval",
  "clearFinishedJobsBatchSize",
  "concurrencyMaintenanceInterval",
]);
const DEFAULT_CONCURRENCY_MAINTENANCE_INTERVAL = 600_000;

/** Check `firm.start()` options and fill in defaults: what the supervisor runs. */
export function resolveStartOptions(options: StartOptions = {}): ResolvedStartOptions {
  rejectUnknownKeys(options, START_KEYS, "start option");
  const mode = options.mode ?? "async";
  if (mode !== "async" && mode !== "fork")
    throw new ConfigurationError(`start option mode must be "fork" or "async", got ${shown(mode)}`);
  const processHeartbeatInterval = positive(
    toTimerMilliseconds(options.processHeartbeatInterval ?? 60_000, "processHeartbeatInterval"),
    "processHeartbeatInterval",
  );
  const processAliveThreshold = positive(
    toTimerMilliseconds(options.processAliveThreshold ?? 300_000, "processAliveThreshold"),
    "processAliveThreshold",
  );
  if (processAliveThreshold <= processHeartbeatInterval) {
    throw new ConfigurationError(
      `processAliveThreshold (${processAliveThreshold} ms) must be longer than processHeartbeatInterval (${processHeartbeatInterval} ms), ` +
        "or live processes would be pruned as dead",
    );
  }
  const workers = list(options.workers ?? [{}], "workers").map((worker, index) =>
    resolveWorker(worker, `workers[${index}]`),
  );
  const dispatchers = list(options.dispatchers ?? [{}], "dispatchers").map((dispatcher, index) =>
    resolveDispatcher(dispatcher, `dispatchers[${index}]`),
  );
  return Object.freeze({
    mode,
    require: resolveRequire(options.require),
    workers,
    dispatchers,
    shutdownTimeout: toTimerMilliseconds(options.shutdownTimeout ?? 5000, "shutdownTimeout"),
    processHeartbeatInterval,
    processAliveThreshold,
    scheduler: resolveSchedulerOptions(options.scheduler, options.recurring !== undefined),
  });
}

function resolveWorker(worker: WorkerOptions, where: string): ResolvedWorker {
  rejectUnknownKeys(worker, WORKER_KEYS, `${where} option`);
  const queues = worker.queues ?? "*";
  queuePatterns(queues);
  return Object.freeze({
    queues,
    concurrency: positiveInteger(worker.concurrency ?? 3, `${where}.concurrency`),
    pollingInterval: positive(
      toTimerMilliseconds(worker.pollingInterval ?? 100, `${where}.pollingInterval`),
      `${where}.pollingInterval`,
    ),
    processes: positiveInteger(worker.processes ?? 1, `${where}.processes`),
    execArgv: resolveWorkerExecArgv(worker.execArgv, `${where}.execArgv`),
    ...(worker.prefetch === undefined ? {} : { prefetch: nonNegativeInteger(worker.prefetch, `${where}.prefetch`) }),
  });
}

function resolveDispatcher(dispatcher: DispatcherOptions, where: string): ResolvedDispatcher {
  rejectUnknownKeys(dispatcher, DISPATCHER_KEYS, `${where} option`);
  return Object.freeze({
    pollingInterval: positive(
      toTimerMilliseconds(dispatcher.pollingInterval ?? 1000, `${where}.pollingInterval`),
      `${where}.pollingInterval`,
    ),
    batchSize: positiveInteger(dispatcher.batchSize ?? 500, `${where}.batchSize`),
    clearFinishedJobsInterval: positive(
      toTimerMilliseconds(dispatcher.clearFinishedJobsInterval ?? 300_000, `${where}.clearFinishedJobsInterval`),
      `${where}.clearFinishedJobsInterval`,
    ),
    clearFinishedJobsBatchSize: positiveInteger(
      dispatcher.clearFinishedJobsBatchSize ?? 500,
      `${where}.clearFinishedJobsBatchSize`,
    ),
    concurrencyMaintenanceInterval: maintenanceInterval(
      dispatcher.concurrencyMaintenanceInterval,
      `${where}.concurrencyMaintenanceInterval`,
    ),
  });
}

function maintenanceInterval(value: Duration | false | undefined, what: string): number | false {
  if (value === false) return false;
  return positive(toTimerMilliseconds(value ?? DEFAULT_CONCURRENCY_MAINTENANCE_INTERVAL, what), what);
}

function list<T>(value: readonly T[], what: string): readonly T[] {
  if (!Array.isArray(value)) throw new ConfigurationError(`${what} must be a list, got ${shown(value)}`);
  return value;
}

function resolveRequire(paths: unknown): readonly string[] | undefined {
  if (paths === undefined) return undefined;
  if (!Array.isArray(paths) || paths.length === 0 || !paths.every((path) => typeof path === "string" && path !== "")) {
    throw new ConfigurationError(`start option require must be a non-empty list of module paths, got ${shown(paths)}`);
  }
  return Object.freeze([...paths]);
}
