import { type Duration, toMilliseconds } from "./duration.js";
import { ConfigurationError, FirmQueueError } from "./errors.js";
import { shown } from "./shown-value.js";

/** What `new RateLimitedError(…)` takes. */
export interface RateLimitedOptions {
  /**
   * How long the job's budget stays closed: milliseconds or a string such as `"30s"`. Usually
   * what the remote service said (a 429's `Retry-After`).
   */
  readonly retryIn: Duration;
  /** The error that told the handler it was rate limited (a 429 response's error). */
  readonly cause?: unknown;
}

const OPTIONS = new Set(["retryIn", "cause"]);
const RATE_LIMITED = Symbol.for("firm-queue.rate-limited");

/**
 * Throw this from a handler when the remote service says "too many requests": the job goes back
 * to waiting with no attempt counted, and its rate-limit budget (its key's; else its group's or
 * job name's; else its queue's) is closed for `retryIn` on every host. See docs/rate-limits.md.
 *
 * ```ts
 * if (response.status === 429) throw new RateLimitedError({ retryIn: "30s" });
 * ```
 *
 * A bad `retryIn` (missing, negative, unparsable, longer than the longest duration) is a
 * ConfigurationError thrown by the constructor; from a handler that is an ordinary failed attempt.
 */
export class RateLimitedError extends FirmQueueError {
  /** How long the budget stays closed, in milliseconds. */
  readonly retryInMs: number;

  constructor(options: RateLimitedOptions) {
    const retryInMs = checkRetryIn(options);
    super(`Rate limited: the job's budget is closed for ${retryInMs} ms`, { cause: options.cause });
    this.retryInMs = retryInMs;
    Object.defineProperty(this, RATE_LIMITED, { value: retryInMs });
  }
}

function checkRetryIn(options: unknown): number {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new ConfigurationError(
      `new RateLimitedError() takes an object such as { retryIn: "30s" }, got ${shown(options)}`,
    );
  }
  for (const key of Object.keys(options)) {
    if (!OPTIONS.has(key))
      throw new ConfigurationError(`Unknown RateLimitedError option "${key}" (known: ${[...OPTIONS].join(", ")})`);
  }
  const { retryIn } = options as { retryIn?: unknown };
  if (retryIn === undefined)
    throw new ConfigurationError('RateLimitedError option retryIn is required, such as "30s" or 30000');
  return toMilliseconds(retryIn as Duration, "RateLimitedError option retryIn");
}

/**
 * How long `error` closes its job's budget, in milliseconds, if it is a {@link RateLimitedError}
 * (even one thrown by another copy of this package); null otherwise.
 */
export function rateLimitedFor(error: unknown): number | null {
  if (error instanceof RateLimitedError) return error.retryInMs;
  if (typeof error !== "object" || error === null) return null;
  const ms = (error as Record<symbol, unknown>)[RATE_LIMITED];
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : null;
}
