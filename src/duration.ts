import { ConfigurationError } from "./errors.js";
import { shown } from "./shown-value.js";

/** The units a duration string may end with: milliseconds, seconds, minutes, hours, days. */
export type DurationUnit = "ms" | "s" | "m" | "h" | "d";

type Digit = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9";

/**
 * A duration written as a string: a number that starts with a digit, then a unit (`"250ms"`,
 * `"5s"`, `"1.5m"`, `"1h"`, `"2d"`; a space may stand before the unit). The number is read as
 * JavaScript's `Number()` reads it, the way TypeScript's `${number}` does, so `"1e3ms"` and
 * `"0x10s"` are durations too; starting with a digit keeps out signs, leading spaces and
 * `Infinity`. The type and the parser accept exactly the same strings (a property test checks
 * it); `"5 minutes"` or `"-1s"` does not compile. A string known only at run time (a flag, an
 * environment variable) can be checked with {@link isDuration}.
 */
export type DurationString = `${number}${DurationUnit}` & `${Digit}${string}`;

/** A length of time: milliseconds as a number, or a {@link DurationString} such as `"500ms"`, `"5s"`, `"3m"`, `"1h"`, `"2d"`. */
export type Duration = number | DurationString;

const UNIT_MS: Readonly<Record<DurationUnit, number>> = {
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

/**
 * The milliseconds a {@link DurationString} stands for, or undefined when `text` is none: the
 * same rule as the type. "ms" is tried before "s": no number ends in "m", so at most one split
 * of a string reads as a number.
 */
function parseDurationString(text: string): number | undefined {
  if (!/^[0-9]/.test(text)) return undefined;
  for (const unit of ["ms", "s", "m", "h", "d"] as const) {
    if (!text.endsWith(unit)) continue;
    const number = Number(text.slice(0, -unit.length));
    if (Number.isFinite(number)) return number * UNIT_MS[unit];
  }
  return undefined;
}

/**
 * Whether `value` is a {@link Duration}: a non-negative finite number of milliseconds, or a
 * string of the form {@link DurationString} accepts. For strings read at run time (flags,
 * environment variables) before they are passed as an option; a duration longer than
 * 8.64e15 ms is still refused by the option.
 */
export function isDuration(value: unknown): value is Duration {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0;
  return typeof value === "string" && parseDurationString(value) !== undefined;
}

/**
 * Turn a {@link Duration} into milliseconds. `what` names the option in the error message,
 * so a bad value in a config file points at its key. Takes any string, for values read at run
 * time (flags, config files): one that is no {@link DurationString} is a ConfigurationError.
 */
export function toMilliseconds(value: Duration | string, what: string): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0) {
      throw new ConfigurationError(`${what} must be a non-negative number of milliseconds, got ${value}`);
    }
    return withinRange(value, value, what);
  }
  if (typeof value === "string") {
    const ms = parseDurationString(value);
    if (ms !== undefined) return withinRange(Math.round(ms), value, what);
  }
  throw new ConfigurationError(
    `${what} must be milliseconds or a string like "500ms", "5s", "3m", "1h", "2d"; got ${shown(value)}`,
  );
}

function withinRange(ms: number, given: Duration | string, what: string): number {
  if (!Number.isFinite(ms) || ms > MAX_DURATION_MS)
    throw new ConfigurationError(`${what} is too long (${shown(given)}): at most ${MAX_DURATION_MS} ms`);
  return ms;
}

/**
 * A duration that a timer waits out (an interval, a timeout): like {@link toMilliseconds}, but
 * at most {@link MAX_TIMER_MS}. Node would fire a longer timer after 1 ms: a 30-day shutdown
 * timeout would release running jobs at once.
 */
export function toTimerMilliseconds(value: Duration | string, what: string): number {
  const ms = toMilliseconds(value, what);
  if (ms > MAX_TIMER_MS) {
    throw new ConfigurationError(
      `${what} must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest a timer can wait), got ${shown(value)}`,
    );
  }
  return ms;
}
