import { shown } from "./shown-value.js";
/**
 * Every error firm-queue throws on purpose is a {@link FirmQueueError}. Subclasses name the
 * situation so callers can branch on `instanceof` or on `error.name` after a round trip
 * through the database (failed executions store the name).
 */
export class FirmQueueError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An option, a config key or a value given to the API is not acceptable. */
export class ConfigurationError extends FirmQueueError {}

/**
 * A `readUrl` firm-queue cannot read from: SQLite has no replicas, and a replica is the same kind
 * of database as the primary.
 */
export class ReadUrlError extends ConfigurationError {
  constructor(
    /** The offending URL, any password hidden. */
    readonly readUrl: string,
    problem: "sqlite" | { readonly primary: string; readonly replica: string },
  ) {
    super(
      problem === "sqlite"
        ? `readUrl ${readUrl}: SQLite has no replicas to read from (readUrl is for PostgreSQL and MariaDB/MySQL); leave readUrl out`
        : `readUrl ${readUrl} is ${problem.replica} but the database is ${problem.primary}: a replica is a copy of the primary, point readUrl at one`,
    );
  }
}

/**
 * A recurring task that cannot be used: a bad cron expression or time zone, an unknown job, an
 * unknown key. The message starts with the task's key so a config with many tasks points at one.
 */
export class RecurringTaskError extends ConfigurationError {
  constructor(
    readonly taskKey: string,
    problem: string,
    options?: { cause?: unknown },
  ) {
    super(`Recurring task ${shown(taskKey)}: ${problem}`, options);
  }
}

/**
 * A database URL could not be understood, or names a database firm-queue does not support. A
 * ConfigurationError, like every other bad option.
 */
export class DatabaseUrlError extends ConfigurationError {
  /** The URL as given, password hidden. */
  readonly url: string;
  constructor(
    url: string,
    /** What is wrong with it. */
    readonly reason: string,
  ) {
    super(`Invalid database URL ${JSON.stringify(redactUrl(url))}: ${reason}`);
    this.url = redactUrl(url);
  }
}

/** Job arguments that cannot be stored as JSON; nothing was written. */
export class SerializationError extends FirmQueueError {
  constructor(
    readonly jobName: string,
    /** Where in the arguments the bad value sits, such as `args.items[2]`. */
    readonly path: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`Cannot enqueue job "${jobName}": ${path} ${problem}`, options);
  }
}

/** Stored job arguments that cannot be read back. */
export class DeserializationError extends FirmQueueError {}

/** A worker claimed a job whose name has no definition in this process. */
export class UnknownJobError extends FirmQueueError {
  constructor(
    readonly jobName: string,
    /** The job names this process defines. */
    readonly known: readonly string[],
  ) {
    const hint = known.length > 0 ? `defined here: ${known.join(", ")}` : "no jobs are defined in this process";
    super(`No job named "${jobName}" is defined in this process (${hint})`);
  }
}

/**
 * A worker claimed a job that is declared in this process but has no handler: the worker must
 * load the module that calls `firm.implement` for it.
 */
export class JobNotImplementedError extends UnknownJobError {
  constructor(jobName: string, known: readonly string[]) {
    super(jobName, known);
    this.message = `Job "${jobName}" is declared but has no handler in this process: call firm.implement() for it in a module the worker loads`;
  }
}

/** `defineJob` or `declareJob` was called twice with one name, or `implement` twice for one job. */
export class DuplicateJobError extends FirmQueueError {
  constructor(
    readonly jobName: string,
    /** What happened twice: the job was declared (or defined), or given a handler. */
    readonly twice: "defined" | "implemented" = "defined",
  ) {
    super(
      twice === "defined"
        ? `A job named "${jobName}" is already defined`
        : `Job "${jobName}" already has a handler in this process; implement it once`,
    );
  }
}

/**
 * `firm.enqueue` was given the name of a job this process has not declared, so its queue,
 * priority and concurrency limit are unknown here. Load the module that declares it, or pass
 * `{ undeclared: true }` to enqueue it with the defaults and no concurrency limit. Nothing was written.
 */
export class UndeclaredJobError extends FirmQueueError {
  constructor(
    readonly jobName: string,
    /** The job names this process declares. */
    readonly known: readonly string[],
  ) {
    const hint = known.length > 0 ? `declared here: ${known.join(", ")}` : "no jobs are declared in this process";
    super(
      `Cannot enqueue "${jobName}" by name: it is not declared in this process (${hint}). ` +
        "Import the module that declares it, or pass { undeclared: true } to enqueue it without its declaration's options",
    );
  }
}

/** One problem a job's schema found in its arguments: where (such as `items[2].sku`) and what. */
export interface ArgumentIssue {
  /** Where in the arguments, `""` for the arguments as a whole. */
  readonly path: string;
  readonly message: string;
}

/**
 * A job's arguments do not pass its declaration's `schema`. At enqueue nothing was written (in a
 * bulk enqueue, none of the jobs). Before a handler runs (a job stored by an older version of the
 * app) the attempt fails without running the handler, and the job is not retried.
 */
export class InvalidJobArgumentsError extends FirmQueueError {
  constructor(
    readonly jobName: string,
    readonly issues: readonly ArgumentIssue[],
    /** Where it was found: when enqueuing, or when about to run a stored job. */
    readonly stage: "enqueue" | "run",
    /** The job's place in a bulk enqueue (from 0), or its id when about to run it. */
    readonly at?: number,
  ) {
    const where =
      stage === "enqueue"
        ? `Cannot enqueue job "${jobName}"${at === undefined ? "" : ` (item ${at} of the list; nothing was written)`}`
        : `Job ${at ?? "?"} ("${jobName}") was not run`;
    const list = issues.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`));
    super(`${where}: its arguments do not match the job's schema: ${list.join("; ")}`);
    // Running it again cannot make stored arguments valid: fail it at once, as UnrecoverableError does.
    if (stage === "run") Object.defineProperty(this, Symbol.for("firm-queue.unrecoverable"), { value: true });
  }
}

/** A job id that does not exist (or no longer exists). */
export class JobNotFoundError extends FirmQueueError {
  constructor(
    readonly jobId: number,
    /** What the message says of the job (for subclasses). */
    problem = "does not exist",
  ) {
    super(`Job ${jobId} ${problem}`);
  }
}

/**
 * A `dependsOn` or `onDependencyFailure` enqueue option that cannot be used: not a list, an entry
 * that is not a job id, the same id twice, more than the maximum number of dependencies, or a
 * policy other than `"cancel"` or `"run"`. Nothing was written.
 */
export class InvalidDependencyError extends ConfigurationError {
  constructor(
    /** The option at fault, as the caller wrote it (`enqueue("resize") option dependsOn`). */
    readonly option: string,
    readonly problem: string,
  ) {
    super(`${option} ${problem}; nothing was written`);
  }
}

/**
 * A `firm.flow` or `firm.batch` call was given a node or job it cannot write: not an object, a
 * name missing, unknown keys, `children` that is not a list, the same node under itself, or an
 * option a flow or batch cannot honour. `path` names the place (`flow.children[1].name`). Nothing
 * of the call was written.
 */
export class InvalidFlowError extends ConfigurationError {
  constructor(
    /** Where in the call's input the fault is, as `flow.children[0].options`. */
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} ${problem}; nothing was written`);
  }
}

/**
 * A `firm.batch` call (or `context.batch.add`) was given something it cannot write: a list that is
 * not an array or is empty, a job or callback without a name, a name no job is declared with, a
 * unique job. `path` says where (`batch.jobs[2].name`, `batch.onFinish`). Nothing was written.
 */
export class InvalidBatchError extends ConfigurationError {
  constructor(
    /** Where in the call's input the fault is, as `batch.jobs[0].options`. */
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} ${problem}; nothing was written`);
  }
}

/** `context.batch.add` on a batch that has already ended (a callback's, or a job retried by hand). */
export class BatchEndedError extends FirmQueueError {
  constructor(readonly batchId: number) {
    super(`batch ${batchId} has ended: jobs can no longer be added to it; nothing was written`);
  }
}

/** A handler returned a value whose JSON is larger than the limit; the attempt failed. */
export class ResultTooLargeError extends FirmQueueError {
  constructor(
    readonly jobName: string,
    readonly jobId: number,
    /** Size of the result's JSON, in bytes. */
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `Job "${jobName}" (${jobId}) returned a result of ${bytes} bytes as JSON; results are limited to ${limit} bytes. ` +
        "Store large results elsewhere and return a reference",
    );
  }
}

/** A handler returned a value that cannot be stored as JSON (or reported such a progress value). */
export class ResultNotSerializableError extends FirmQueueError {
  constructor(
    readonly jobName: string,
    readonly jobId: number,
    /** `result` or `progress`. */
    readonly what: "result" | "progress",
    readonly problem: string,
  ) {
    super(`Job "${jobName}" (${jobId}): its ${what} cannot be stored as JSON: ${problem}`);
  }
}

/** Something was used after `close()`. */
export class ClosedError extends FirmQueueError {
  constructor(
    /** What was used after `close()`. */
    readonly what: string,
  ) {
    super(`This FirmQueue instance has been closed (close() was called): its ${what} cannot be used any more`);
  }
}

/**
 * Throw this (or a subclass) from a handler to say "retrying cannot help": the attempt fails and
 * the job goes straight to failed executions, whatever attempts its retry policy has left.
 */
export class UnrecoverableError extends FirmQueueError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    Object.defineProperty(this, UNRECOVERABLE, { value: true });
  }
}

const UNRECOVERABLE = Symbol.for("firm-queue.unrecoverable");

/**
 * Whether `error` means "do not retry": an {@link UnrecoverableError}, even one thrown by another
 * copy of this package (a job module loaded through a different path).
 */
export function isUnrecoverable(error: unknown): boolean {
  return (
    error instanceof UnrecoverableError ||
    (typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[UNRECOVERABLE] === true)
  );
}

/** A job ran past its definition's `timeout`: its AbortSignal fired with this, and the attempt failed. */
export class TimeoutError extends FirmQueueError {
  constructor(
    readonly jobName: string,
    readonly jobId: number,
    readonly timeoutMs: number,
  ) {
    super(`Job ${jobId} ("${jobName}") ran longer than its timeout of ${timeoutMs} ms`);
  }
}

/** A failed-job operation named a job that is not in failed executions. */
export class JobNotFailedError extends FirmQueueError {
  constructor(
    readonly jobId: number,
    /** The state the job is in instead. */
    readonly state: string,
  ) {
    super(`Job ${jobId} is ${state}, not failed; nothing was changed`);
  }
}

/** A failed job cannot be deleted (or retried) while a worker runs it. */
export class JobRunningError extends FirmQueueError {
  constructor(
    readonly jobId: number,
    /** The process whose worker holds the claim, when known. */
    readonly processId: number | null,
    /** What was asked and refused. */
    readonly action: "deleted" | "retried",
  ) {
    const by = processId === null ? "" : ` by process ${processId}`;
    super(
      `Job ${jobId} is running (claimed${by}); it cannot be ${action} while that attempt runs. Nothing was changed`,
    );
  }
}

/** Hide the password of a URL before it reaches a message or a log line. */
export function redactUrl(url: string): string {
  return url
    .replace(/^([a-z0-9+.-]+:\/\/[^:/@]*:)[^@/]*@/i, "$1***@")
    .replace(/([?&](?:password|sslpassword)=)[^&#]*/gi, "$1***");
}

/** The worker process running the job exited abnormally; its supervisor reaped it. */
export class ProcessExitError extends FirmQueueError {
  constructor(
    readonly processName: string,
    readonly pid: number | null,
    /** How it exited, such as `killed by SIGKILL`. */
    readonly how: string,
  ) {
    super(`The process running this job (${processName}, pid ${pid ?? "unknown"}) exited abnormally: ${how}`);
  }
}

/** The process running the job missed its heartbeats past the alive threshold and was pruned as dead. */
export class ProcessPrunedError extends FirmQueueError {
  constructor(
    readonly processName: string,
    readonly pid: number,
    readonly lastHeartbeatAt: Date,
    readonly thresholdMs: number,
  ) {
    super(
      `The process running this job (${processName}, pid ${pid}) sent no heartbeat since ${lastHeartbeatAt.toISOString()} ` +
        `(alive threshold ${thresholdMs} ms) and was pruned as dead`,
    );
  }
}

/** The job was claimed by a process whose row no longer exists (found when a supervisor booted). */
export class ProcessMissingError extends FirmQueueError {
  constructor(readonly processId: number | null) {
    super(`The process that claimed this job (process id ${processId ?? "none"}) is not registered any more`);
  }
}

/** A claim was refused because the claiming process's row is gone (it was pruned as dead). */
export class ProcessRowGoneError extends FirmQueueError {
  constructor(processId: number) {
    super(
      `Process ${processId} may not claim jobs: its row in firm_queue_processes is gone (pruned as dead after missed heartbeats?)`,
    );
  }
}

/** A fork-mode child process could not start its role (bad job modules, unreachable database, …). */
export class ChildProcessError extends FirmQueueError {
  constructor(
    readonly role: string,
    /** Why it could not start, as the child reported it or as it exited. */
    readonly detail: string,
  ) {
    super(`The ${role} child process could not start: ${detail}`);
  }
}

/** A recurring task was asked for by a key that no task has. */
export class RecurringTaskNotFoundError extends FirmQueueError {
  constructor(readonly taskKey: string) {
    super(`There is no recurring task with key ${shown(taskKey)}`);
  }
}

/**
 * A database round trip got no answer within `queryTimeout`: the network may be dropping packets
 * without a reset (a partition, a firewall that forgot the connection). The connection is closed
 * so nothing else waits on it; the pool opens a fresh one for the next query.
 */
export class DatabaseTimeoutError extends FirmQueueError {
  constructor(readonly timeoutMs: number) {
    super(`The database did not answer within ${timeoutMs} ms (queryTimeout); the connection was closed as lost`);
  }
}

/**
 * `waitFor` (or `enqueueAndWait`): the job failed for good (it sits in failed executions).
 * `error` is the stored error of its last attempt, as `getJob` shows it.
 */
export class JobFailedError extends FirmQueueError {
  constructor(
    readonly jobId: number,
    readonly error: { readonly name: string; readonly message: string; readonly stack?: string },
  ) {
    super(`Job ${jobId} failed: ${error.name}: ${error.message}`);
  }
}

/** `waitFor` (or `enqueueAndWait`): the job was cancelled before it finished. */
export class JobCancelledError extends FirmQueueError {
  constructor(readonly jobId: number) {
    super(`Job ${jobId} was cancelled`);
  }
}

/** `waitFor` (or `enqueueAndWait`) gave up after its `timeout`; the job itself goes on. */
export class WaitTimeoutError extends FirmQueueError {
  constructor(
    readonly jobId: number,
    /** The timeout, in milliseconds. */
    readonly timeout: number,
  ) {
    super(`Job ${jobId} had not ended after ${timeout} ms of waiting (the job goes on)`);
  }
}

/**
 * `waitFor`: the job was deleted while awaited, before its outcome could be read. With
 * `preserveFinishedJobs: false` a job is deleted as it finishes, so this is how its success
 * shows; it also happens when a queue is cleared or a failed job discarded. A JobNotFoundError.
 */
export class JobDeletedWhileAwaitedError extends JobNotFoundError {
  constructor(jobId: number) {
    super(
      jobId,
      "was deleted before its outcome could be read (with preserveFinishedJobs false, finished jobs are deleted as they finish)",
    );
  }
}

/** `enqueueAndWait`: the job's concurrency limit dropped it on conflict, so there is nothing to wait for. */
export class JobDroppedError extends FirmQueueError {
  constructor(readonly jobName: string) {
    super(
      `enqueueAndWait("${jobName}"): the job was dropped by its concurrency limit, so there is nothing to wait for`,
    );
  }
}

/**
 * The database server firm-queue reached takes no writes: a hot standby (not promoted yet), or a
 * server with `default_transaction_read_only` on. Nothing can be claimed, finished or enqueued
 * there, so firm-queue says so by name instead of retrying the statement as if it were a passing
 * conflict. With several hosts and `target_session_attrs=read-write` in the URL it is raised only
 * when no listed server takes writes (during a failover, until the standby is promoted).
 */
export class ReadOnlyDatabaseError extends FirmQueueError {
  constructor(
    /** The servers tried, `host:port` each. */
    readonly hosts: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(
      `The database server${hosts.length > 1 ? "s" : ""} ${hosts.join(", ")} ${hosts.length > 1 ? "are" : "is"} read-only (a standby, or default_transaction_read_only is on): firm-queue cannot claim, finish or enqueue jobs there. Point databaseUrl at the primary, or list every server with target_session_attrs=read-write (postgres://user@primary:5432,standby:5432/db?target_session_attrs=read-write) so that firm-queue follows a promotion`,
      options,
    );
  }
}
