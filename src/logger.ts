/** Severity of a log line, least to most severe. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Where firm-queue writes what it does. `fields` are structured context (job id, queue, …). */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** How {@link consoleLogger} writes a line: `key=value` text, or one JSON object per line. */
export type LogFormat = "text" | "json";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Whether `value` names a log format. */
export function isLogFormat(value: unknown): value is LogFormat {
  return value === "text" || value === "json";
}

/** Whether `value` names a log level. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && Object.hasOwn(ORDER, value);
}

/**
 * One line per event on stderr: time, level, pid, message, then `key=value` fields, so a line
 * in a log aggregator says which process did what to which job. With `format` "json", each line
 * is a JSON object instead: `time`, `level`, `pid`, `msg`, then the fields (errors as `name`,
 * `message`, `stack`), for log pipelines that parse JSON.
 */
export function consoleLogger(minimum: LogLevel = "info", format: LogFormat = "text"): Logger {
  const write = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < ORDER[minimum]) return;
    if (format === "json") {
      process.stderr.write(`${jsonLine(level, message, fields)}\n`);
      return;
    }
    const context = fields ? formatFields(fields) : "";
    process.stderr.write(
      `${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} firm-queue[${process.pid}] ${message}${context}\n`,
    );
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** One JSON log line; a field that cannot be written as JSON (a cycle) is written as text. */
export function jsonLine(level: LogLevel, message: string, fields?: Record<string, unknown>): string {
  const line: Record<string, unknown> = { time: new Date().toISOString(), level, pid: process.pid, msg: message };
  for (const [key, value] of Object.entries(fields ?? {})) {
    if (value === undefined || key in line) continue;
    try {
      line[key] = JSON.parse(JSON.stringify(value, jsonValue) ?? "null");
    } catch {
      line[key] = String(value);
    }
  }
  return JSON.stringify(line);
}

/** Errors keep their name, message and stack (JSON.stringify drops them); BigInts become text. */
function jsonValue(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return typeof value === "bigint" ? value.toString() : value;
}

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
