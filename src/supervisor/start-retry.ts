import { Backoff, sleep } from "../backoff.js";
import { isConnectionError } from "../database/transient-errors.js";
import type { Logger } from "../logger.js";

/** How a start retries: the first wait, the longest wait, and how long it keeps trying. */
export interface StartRetryTimings {
  readonly firstDelay: number;
  readonly longestDelay: number;
  /** No new try starts later than this after the first failure; the last error is thrown then. */
  readonly giveUpAfter: number;
}

/**
 * A start's database steps (connecting, with the supervisor's schema check; each process's
 * registration; the scheduler's sync) retry a connection error for up to 30 s. A try may itself take up to the
 * connect timeout (10 s by default), so one step gives up within about 40 s.
 */
export const START_RETRY: StartRetryTimings = Object.freeze({
  firstDelay: 250,
  longestDelay: 5000,
  giveUpAfter: 30_000,
});

/**
 * Run one database step of a start (`what`, such as "registering the worker process"), trying it
 * again with capped, jittered backoff while it fails with a connection error (reset, refused,
 * timed out, the server starting up or shutting down, SQLite busy: see `isConnectionError`), so
 * that a database blip while a process starts does not fail the boot. Each failure is logged as a
 * warning naming the step, the attempt and the wait. Any other error (bad credentials, a missing
 * migration, a broken job module) is thrown at once, and so is the last connection error once
 * `giveUpAfter` has passed. `work` gets the attempt number (1 first) to undo what a try whose
 * answer was lost may have committed.
 */
export async function retryStart<T>(
  what: string,
  logger: Logger,
  work: (attempt: number) => Promise<T>,
  timings: StartRetryTimings = START_RETRY,
): Promise<T> {
  const backoff = new Backoff(timings.firstDelay, timings.longestDelay);
  let firstFailure: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await work(attempt);
      if (attempt > 1) logger.info(`${what} succeeded after ${attempt} attempts`, { attempts: attempt });
      return result;
    } catch (error) {
      firstFailure ??= Date.now();
      const delay = Math.round(backoff.next());
      const waited = Date.now() - firstFailure;
      if (!isConnectionError(error) || waited + delay > timings.giveUpAfter) throw error;
      logger.warn(
        `${what} failed with a transient error (attempt ${attempt}): ${describe(error)}; next try in ${delay} ms, ` +
          `giving up ${Math.round((timings.giveUpAfter - waited) / 1000)} s from now`,
        { attempt, nextTryMs: delay, error },
      );
      await sleep(delay);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
