import { DEFAULT_CONCURRENCY_DURATION, type ConcurrencyLimit } from "./concurrency-options.js";
import type { DefinitionLookup } from "./job-registry.js";
import { loggedJobEvents, type JobEvents } from "../job-events.js";
import type { Logger } from "../logger.js";
import { NO_RETRY, type RetryPolicy } from "./retry-policy.js";

/**
 * The limit assumed for a stored job that has a concurrency key but whose definition this
 * process does not know (a dispatcher started without the job modules, say): one at a time,
 * blocking, for the default duration. Never more permissive than what was asked for, so the
 * limit is not bypassed; it may run such jobs more slowly than the real definition would.
 */
export const FALLBACK_LIMIT: ConcurrencyLimit = Object.freeze({
  to: 1,
  duration: DEFAULT_CONCURRENCY_DURATION,
  onConflict: "block",
});

/**
 * What model code asks about a job by name when it moves the job between states: the
 * concurrency limit its key is held to (enqueue, the dispatcher, releases, promotions,
 * maintenance) and its retry policy (a failed attempt). One per FirmQueue, built on its job
 * definitions; jobs not defined in this process get safe fallbacks. It also carries the
 * instance's job events, since it reaches every path that moves a job.
 */
export class JobPolicies {
  private readonly warned = new Set<string>();

  constructor(
    private readonly definitions: DefinitionLookup,
    /** Where policy decisions (dropped jobs, fallbacks) are logged. */
    readonly logger: Logger,
    /** The instance's job events: every path that moves a job tells them (see job-events.ts). */
    readonly events: JobEvents = loggedJobEvents(logger),
  ) {}

  /**
   * The limit a job with concurrency key `key` is held to. A job that has a key but no known
   * definition gets {@link FALLBACK_LIMIT}, with a warning (once per job name).
   */
  limitFor(jobName: string, key: string): ConcurrencyLimit {
    const limit = this.definitions.get(jobName)?.options.concurrency;
    if (limit) return limit;
    if (!this.warned.has(jobName)) {
      this.warned.add(jobName);
      this.logger.warn(
        "job has a concurrency key but is not defined in this process; holding its key to one job at a time. " +
          "Load the module that defines it (--require) in every process that runs the dispatcher or workers",
        { job: jobName, concurrencyKey: key, assumed: FALLBACK_LIMIT },
      );
    }
    return FALLBACK_LIMIT;
  }

  /** The rate limit of a job's own budget; null for a job without one, or not defined here. */
  rateLimitFor(jobName: string): { readonly limit: number; readonly periodMs: number } | null {
    const rateLimit = this.definitions.get(jobName)?.options.rateLimit;
    return rateLimit ? { limit: rateLimit.limit, periodMs: rateLimit.periodMs } : null;
  }

  /** The retry policy of a job; one attempt, no retry, for a job not defined here. */
  retryPolicyFor(jobName: string): RetryPolicy {
    return this.definitions.get(jobName)?.options.retry ?? NO_RETRY;
  }
}
