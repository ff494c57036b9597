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
 * A recurring task that cannot be used: a bad cron expression or time zone, an unknown job, an
 * unknown key. The message starts with the task's key so a config with many tasks points at one.
 */
export class RecurringTaskError extends ConfigurationError {
  constructor(
    readonly taskKey: string,
    problem: string,
    options?: { cause?: unknown },
  ) {
    super(`Recurring task ${JSON.stringify(taskKey)}: ${problem}`, options);
  }
}

/** A database URL could not be understood, or names a database firm-queue does not support. */
export class DatabaseUrlError extends FirmQueueError {
  constructor(url: string, reason: string) {
    super(`Invalid database URL ${JSON.stringify(redactUrl(url))}: ${reason}`);
  }
}

/** Job arguments that cannot be stored as JSON; nothing was written. */
export class SerializationError extends FirmQueueError {
  constructor(jobName: string, path: string, problem: string) {
    super(`Cannot enqueue job "${jobName}": ${path} ${problem}`);
  }
}

/** Stored job arguments that cannot be read back. */
export class DeserializationError extends FirmQueueError {}

/** A worker claimed a job whose name has no definition in this process. */
export class UnknownJobError extends FirmQueueError {
  constructor(jobName: string, known: readonly string[]) {
    const hint = known.length > 0 ? `defined here: ${known.join(", ")}` : "no jobs are defined in this process";
    super(`No job named "${jobName}" is defined in this process (${hint})`);
  }
}

/** `defineJob` was called twice with one name. */
export class DuplicateJobError extends FirmQueueError {
  constructor(jobName: string) {
    super(`A job named "${jobName}" is already defined`);
  }
}

/** A job id that does not exist (or no longer exists). */
export class JobNotFoundError extends FirmQueueError {
  constructor(jobId: number) {
    super(`Job ${jobId} does not exist`);
  }
}

/** Something was used after `close()`. */
export class ClosedError extends FirmQueueError {
  constructor(what: string) {
    super(`${what}: this FirmQueue instance has been closed`);
  }
}

/** Hide the password of a URL before it reaches a message or a log line. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z0-9+.-]+:\/\/[^:/@]*:)[^@/]*@/i, "$1***@");
}
