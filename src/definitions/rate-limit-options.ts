import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";

/**
 * The `rateLimit` option of `defineJob` and `declareJob`: at most `limit` starts in any window of
 * `period`, across every worker and host (see docs/rate-limits.md).
 */
// biome-ignore lint/suspicious/noExplicitAny: an unannotated definition accepts any arguments (variance of the default)
export interface RateLimitOptions<Args = any> {
  /** Starts allowed in any window of `period`: a whole number of at least 1. */
  readonly limit: number;
  /** The window's length: milliseconds or a string such as `"1s"`, `"1m"`; at least 100 ms. */
  readonly period: Duration;
  /** Each key has its own budget: a function of the (schema-validated) arguments. */
  readonly key?: (args: Args) => string | number;
  /** Jobs of several names with one group share one budget (per key). Default: the job's name. */
  readonly group?: string;
}

/** A budget's limit: `limit` starts per `periodMs`. */
export interface RateLimit {
  readonly limit: number;
  /** Milliseconds. */
  readonly periodMs: number;
}

/** {@link RateLimitOptions} checked, with defaults filled in. */
export interface ResolvedRateLimit extends RateLimit {
  readonly group: string;
  /** The key function, or null for one budget per group. */
  readonly keyOf: ((args: unknown) => unknown) | null;
}

/** Shortest period: below it the database clock's resolution and claim latency dominate. */
export const MIN_PERIOD_MS = 100;
/** Longest period a budget row holds (an INTEGER of milliseconds, about 24.8 days). */
const MAX_PERIOD_MS = 2 ** 31 - 1;
/** Longest stored budget key: the column is 255 characters on every database. */
const MAX_KEY_LENGTH = 255;
const KEYS = new Set(["limit", "period", "key", "group"]);

/** Check a `limit` and a `period`; `what` names the option in errors. */
export function checkRateLimit(given: { limit?: unknown; period?: unknown }, what: string): RateLimit {
  const { limit, period } = given;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 2 ** 31 - 1) {
    throw new ConfigurationError(`${what}.limit must be a whole number of at least 1, got ${JSON.stringify(limit)}`);
  }
  if (period === undefined) throw new ConfigurationError(`${what}.period is required, such as "1s" or 1000`);
  const periodMs = toMilliseconds(period as Duration, `${what}.period`);
  if (periodMs < MIN_PERIOD_MS || periodMs > MAX_PERIOD_MS) {
    throw new ConfigurationError(
      `${what}.period must be from ${MIN_PERIOD_MS} ms to about 24.8 days, got ${JSON.stringify(period)}`,
    );
  }
  return { limit, periodMs };
}

/** Check a definition's `rateLimit` option; every mistake is a ConfigurationError naming it. */
export function resolveRateLimit(jobName: string, options: unknown, by = "defineJob"): ResolvedRateLimit | null {
  if (options === undefined) return null;
  const what = `${by}("${jobName}") option rateLimit`;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new ConfigurationError(`${what} must be an object such as { limit: 10, period: "1s" }`);
  }
  for (const name of Object.keys(options)) {
    if (!KEYS.has(name)) throw new ConfigurationError(`Unknown ${what} "${name}" (known: ${[...KEYS].join(", ")})`);
  }
  const given = options as RateLimitOptions;
  const { limit, periodMs } = checkRateLimit(given, what);
  const group = given.group ?? jobName;
  if (typeof group !== "string" || group === "" || group.length > 200) {
    throw new ConfigurationError(
      `${what}.group must be a non-empty string of at most 200 characters, got ${JSON.stringify(group)}`,
    );
  }
  if (given.key !== undefined && typeof given.key !== "function") {
    throw new ConfigurationError(`${what}.key must be a function of the job's arguments, got ${typeof given.key}`);
  }
  const keyOf = (given.key as ((args: unknown) => unknown) | undefined) ?? null;
  return Object.freeze({ limit, periodMs, group, keyOf });
}

/** The budget key of a queue's limit. */
export function queueBudgetKey(queue: string): string {
  return `queue:${queue}`;
}

/**
 * The budget key of a job: `job:<group>` or `job:<group>/<key(args)>`. A key function that
 * throws, or returns anything but a non-empty string or a finite number, is a ConfigurationError
 * naming the option, and nothing is enqueued.
 */
export function rateLimitKeyFor(jobName: string, rateLimit: ResolvedRateLimit, args: unknown): string {
  if (rateLimit.keyOf === null) return `job:${rateLimit.group}`;
  let value: unknown;
  try {
    value = rateLimit.keyOf(args);
  } catch (error) {
    throw new ConfigurationError(
      `The rateLimit.key function of job "${jobName}" threw: ${(error as Error)?.message ?? String(error)}`,
      { cause: error },
    );
  }
  const valid = (typeof value === "string" && value !== "") || (typeof value === "number" && Number.isFinite(value));
  if (!valid) {
    throw new ConfigurationError(
      `The rateLimit.key function of job "${jobName}" must return a non-empty string or a finite number, got ${value === null ? "null" : typeof value}`,
    );
  }
  const key = `job:${rateLimit.group}/${String(value)}`;
  if ([...key].length > MAX_KEY_LENGTH) {
    throw new ConfigurationError(
      `The rateLimit key of job "${jobName}" is longer than ${MAX_KEY_LENGTH} characters: ${key.slice(0, 60)}…`,
    );
  }
  return key;
}
