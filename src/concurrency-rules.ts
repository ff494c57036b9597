import { DEFAULT_CONCURRENCY_DURATION, type ConcurrencyLimit } from "./concurrency-options.js";
import type { Logger } from "./logger.js";

/** Finds the concurrency settings of a job definition by name; undefined when it has none here. */
export type ConcurrencyLookup = (jobName: string) => ConcurrencyLimit | null | undefined;

/**
 * The limit assumed for a stored job that has a concurrency key but whose definition this
 * process does not know (a dispatcher started without the job modules, say): one at a time,
 * blocking, for the default duration. Never more permissive than what was asked for, so the
 * limit is not bypassed; it may run such jobs more slowly than the real definition would.
 */
export const FALLBACK_LIMIT: ConcurrencyLimit = Object.freeze({ to: 1, duration: DEFAULT_CONCURRENCY_DURATION, onConflict: "block" });

/**
 * What every path that can make a job ready (enqueue, the dispatcher, releases, promotions,
 * maintenance) asks to apply concurrency limits: the limit for a job name. One per FirmQueue
 * instance, built on its job registry.
 */
export class ConcurrencyRules {
  private readonly warned = new Set<string>();

  constructor(
    private readonly lookup: ConcurrencyLookup,
    /** Where concurrency decisions (discards, fallbacks) are logged. */
    readonly logger: Logger,
  ) {}

  /**
   * The limit a job with concurrency key `key` is held to. A job that has a key but no known
   * definition gets {@link FALLBACK_LIMIT}, with a warning (once per job name).
   */
  limitFor(jobName: string, key: string): ConcurrencyLimit {
    const limit = this.lookup(jobName);
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
}

