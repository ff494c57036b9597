import { ConfigurationError } from "./errors.js";
import { shown } from "./shown-value.js";

/** A length of time: milliseconds as a number, or a string such as `"250ms"`, `"5s"`, `"3m"`, `"1h"`, `"2d"`. */
export type Duration = number | string;

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Longest wait a Node timer can hold (about 24.8 days); longer ones fire after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Longest duration at all: further than this from now, a Date is no longer valid. */
const MAX_DURATION_MS = 8.64e15;

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
    return withinRange(value, value, what);
  }
  if (typeof value === "string") {
    const match = DURATION_PATTERN.exec(value);
    if (match) return withinRange(Math.round(Number(match[1]) * UNIT_MS[match[2]!]!), value, what);
  }
  throw new ConfigurationError(
    `${what} must be milliseconds or a string like "500ms", "5s", "3m", "1h", "2d"; got ${shown(value)}`,
  );
}

function withinRange(ms: number, given: Duration, what: string): number {
  if (ms > MAX_DURATION_MS)
    throw new ConfigurationError(`${what} is too long (${shown(given)}): at most ${MAX_DURATION_MS} ms`);
  return ms;
}

/**
 * A duration that a timer waits out (an interval, a timeout): like {@link toMilliseconds}, but
 * at most {@link MAX_TIMER_MS}. Node would fire a longer timer after 1 ms: a 30-day shutdown
 * timeout would release running jobs at once.
 */
export function toTimerMilliseconds(value: Duration, what: string): number {
  const ms = toMilliseconds(value, what);
  if (ms > MAX_TIMER_MS) {
    throw new ConfigurationError(
      `${what} must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest a timer can wait), got ${shown(value)}`,
    );
  }
  return ms;
}
