import { ConfigurationError } from "./errors.js";
import type { Logger, LogLevel } from "./logger.js";

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/**
 * A logger that takes the fields first and the message second, as pino and bunyan do:
 * `logger.info({ jobId: 1 }, "job finished")`.
 */
export interface ObjectFirstLogger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

/**
 * Whether `logger` takes its fields first. Told apart by what pino and bunyan loggers have and
 * the `(message, fields)` kind (firm-queue's own, `console`, winston) do not: pino's `bindings()`,
 * bunyan's `level()` function, both with `child()`.
 */
export function isObjectFirst(logger: object): boolean {
  const candidate = logger as { child?: unknown; bindings?: unknown; level?: unknown };
  return (
    typeof candidate.child === "function" &&
    (typeof candidate.bindings === "function" || typeof candidate.level === "function")
  );
}

/**
 * The logger firm-queue writes to, from what the user gave: a `(message, fields)` logger as it is,
 * a pino or bunyan logger wrapped so that it gets `(fields, message)` with the error under `err`
 * (where their standard serializers look for it). Anything without the four level methods is
 * refused with a ConfigurationError.
 */
export function adaptLogger(logger: unknown): Logger {
  if (
    typeof logger !== "object" ||
    logger === null ||
    !LEVELS.every((level) => typeof (logger as never)[level] === "function")
  )
    throw new ConfigurationError(
      "logger must have debug, info, warn and error methods (a pino, bunyan or console-style logger)",
    );
  return isObjectFirst(logger) ? fromObjectFirst(logger as ObjectFirstLogger) : (logger as Logger);
}

/** Wrap a `(fields, message)` logger (pino, bunyan) as a firm-queue {@link Logger}. */
export function fromObjectFirst(target: ObjectFirstLogger): Logger {
  const write =
    (level: LogLevel) =>
    (message: string, fields?: Record<string, unknown>): void =>
      target[level](fields === undefined ? {} : withErrKey(fields), message);
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

/** pino and bunyan serialize an error with its stack only under `err`: move `error` there. */
function withErrKey(fields: Record<string, unknown>): Record<string, unknown> {
  if (!("error" in fields) || "err" in fields) return fields;
  const { error, ...rest } = fields;
  return { ...rest, err: error };
}

/**
 * A logger that adds `fields` to every line it writes to `logger`: `ctx.logger` of a job is the
 * instance's logger bound to the job's id, name, queue and attempt.
 */
export function bindLogger(logger: Logger, bound: Record<string, unknown>): Logger {
  // Closures rather than methods: code that passes `ctx.logger.info` around keeps working.
  const write =
    (level: LogLevel) =>
    (message: string, fields?: Record<string, unknown>): void =>
      logger[level](message, fields === undefined ? bound : { ...bound, ...fields });
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}
