/** Severity of a log line, least to most severe. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Where firm-queue writes what it does. `fields` are structured context (job id, queue, …). */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Whether `value` names a log level. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && Object.hasOwn(ORDER, value);
}

/**
 * One line per event on stderr: time, level, pid, message, then `key=value` fields, so a line
 * in a log aggregator says which process did what to which job.
 */
export function consoleLogger(minimum: LogLevel = "info"): Logger {
  const write = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < ORDER[minimum]) return;
    const context = fields ? formatFields(fields) : "";
    process.stderr.write(
      `${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} firm-queue[${process.pid}] ${message}${context}\n`,
    );
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function formatFields(fields: Record<string, unknown>): string {
  let out = "";
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text =
      value instanceof Error
        ? `${value.name}: ${value.message}`
        : typeof value === "string"
          ? value
          : JSON.stringify(value);
    out += ` ${key}=${/\s/.test(text) ? JSON.stringify(text) : text}`;
  }
  return out;
}
