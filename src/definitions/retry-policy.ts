import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { rejectUnknownKeys } from "../option-checks.js";
import { shown } from "../shown-value.js";

/**
 * How long to wait before the next attempt:
 * - `"exponential"`: 1 s × 2^(n−1) — 1 s, 2 s, 4 s, 8 s, …
 * - `"polynomial"`: (n⁴ + 2) s — 3 s, 18 s, 83 s, 258 s, …
 * - a {@link Duration}: the same delay every time;
 * - a function of the failed attempt's number n (1 for the first) and its error, returning a Duration.
 */
export type Backoff = "exponential" | "polynomial" | Duration | ((attempt: number, error: unknown) => Duration);

/** The `retry` option of `defineJob`. */
export interface RetryOptions {
  /** Attempts in total, the first one included. Default 1: no retry. */
  readonly attempts?: number | undefined;
  /** Delay before each retry. Default `"exponential"`. */
  readonly backoff?: Backoff | undefined;
  /**
   * Spread retries out: each delay is shortened by a random fraction of itself, up to this
   * fraction (0 to 1). Default 0.
   */
  readonly jitter?: number | undefined;
  /** No retry waits longer than this. Default 1 day. */
  readonly maxDelay?: Duration | undefined;
  /** Retry only errors this returns true for. Default: every error. */
  readonly retryOn?: ((error: unknown) => boolean) | undefined;
  /**
   * Errors this returns true for abandon the job: no retry, and it is not kept as failed; it is
   * recorded as finished, its error kept as its last error.
   */
  readonly abandonOn?: ((error: unknown) => boolean) | undefined;
  /** @deprecated The old name of {@link RetryOptions.abandonOn}; give one of the two. */
  readonly discardOn?: ((error: unknown) => boolean) | undefined;
}

/** A retry policy with every default filled in. */
export interface RetryPolicy {
  readonly attempts: number;
  readonly backoff: "exponential" | "polynomial" | number | ((attempt: number, error: unknown) => Duration);
  readonly jitter: number;
  readonly maxDelay: number;
  readonly retryOn: ((error: unknown) => boolean) | null;
  /** `abandonOn` (or its old name `discardOn`), or null. */
  readonly abandonOn: ((error: unknown) => boolean) | null;
}

const RETRY_KEYS = new Set(["attempts", "backoff", "jitter", "maxDelay", "retryOn", "abandonOn", "discardOn"]);
const MAX_ATTEMPTS = 2 ** 31 - 1;
/** The longest a retry waits unless `maxDelay` says otherwise: one day. */
export const DEFAULT_MAX_DELAY = 86_400_000;

/** The policy of a job defined without `retry`, or not defined in this process: one attempt. */
export const NO_RETRY: RetryPolicy = Object.freeze({
  attempts: 1,
  backoff: "exponential",
  jitter: 0,
  maxDelay: DEFAULT_MAX_DELAY,
  retryOn: null,
  abandonOn: null,
});

/** Check a `retry` option and fill in defaults. `where` names the option in error messages. */
export function resolveRetryPolicy(options: RetryOptions | undefined, where: string): RetryPolicy {
  if (options === undefined) return NO_RETRY;
  rejectUnknownKeys(options, RETRY_KEYS, `${where} retry option`);
  const attempts = options.attempts ?? 1;
  if (typeof attempts !== "number" || !Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS) {
    throw new ConfigurationError(
      `${where} retry.attempts must be a whole number of at least 1 (the first attempt included), got ${shown(attempts)}`,
    );
  }
  const jitter = options.jitter ?? 0;
  if (typeof jitter !== "number" || !(jitter >= 0 && jitter <= 1)) {
    throw new ConfigurationError(`${where} retry.jitter must be a fraction from 0 to 1, got ${shown(jitter)}`);
  }
  const maxDelay = toMilliseconds(options.maxDelay ?? DEFAULT_MAX_DELAY, `${where} retry.maxDelay`);
  if (options.abandonOn !== undefined && options.discardOn !== undefined)
    throw new ConfigurationError(`${where} retry.discardOn is the old name of retry.abandonOn: give only abandonOn`);
  return Object.freeze({
    attempts,
    backoff: resolveBackoff(options.backoff ?? "exponential", maxDelay, where),
    jitter,
    maxDelay,
    retryOn: optionalFunction(options.retryOn, `${where} retry.retryOn`),
    abandonOn:
      options.discardOn === undefined
        ? optionalFunction(options.abandonOn, `${where} retry.abandonOn`)
        : optionalFunction(options.discardOn, `${where} retry.discardOn`),
  });
}

function resolveBackoff(backoff: Backoff, maxDelay: number, where: string): RetryPolicy["backoff"] {
  if (backoff === "exponential" || backoff === "polynomial" || typeof backoff === "function") return backoff;
  const what = `${where} retry.backoff`;
  if (typeof backoff !== "number" && typeof backoff !== "string") {
    throw new ConfigurationError(
      `${what} must be "exponential", "polynomial", a duration or a function, got ${shown(backoff)}`,
    );
  }
  let fixed: number;
  try {
    fixed = toMilliseconds(backoff, what);
  } catch {
    throw new ConfigurationError(
      `${what} must be "exponential", "polynomial", a duration such as 5000 or "30s", or a function; got ${shown(backoff)}`,
    );
  }
  if (fixed > maxDelay)
    throw new ConfigurationError(`${what} (${fixed} ms) is longer than retry.maxDelay (${maxDelay} ms)`);
  return fixed;
}

function optionalFunction<F>(value: F | undefined, what: string): F | null {
  if (value === undefined) return null;
  if (typeof value !== "function")
    throw new ConfigurationError(`${what} must be a function (error) => boolean, got ${shown(value)}`);
  return value;
}
