import { ConfigurationError } from "./errors.js";

/** A length of time: milliseconds as a number, or a string such as `"250ms"`, `"5s"`, `"3m"`, `"1h"`, `"2d"`. */
export type Duration = number | string;

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/;

/**
 * Turn a {@link Duration} into milliseconds. `what` names the option in the error message,
 * so a bad value in a config file points at its key.
 */
export function toMilliseconds(value: Duration, what: string): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0) {
      throw new ConfigurationError(`${what} must be a non-negative number of milliseconds, got ${value}`);
    }
    return value;
  }
  if (typeof value === "string") {
    const match = DURATION_PATTERN.exec(value);
    if (match) return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
  }
  throw new ConfigurationError(
    `${what} must be milliseconds or a string like "500ms", "5s", "3m", "1h", "2d"; got ${JSON.stringify(value)}`,
  );
}
