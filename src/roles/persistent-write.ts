import { Backoff, sleep } from "../backoff.js";
import type { Logger } from "../logger.js";

/** First wait after a failed finalization write, and the longest. */
const FIRST_RETRY_MS = 100;
const LONGEST_RETRY_MS = 5000;

/**
 * Run a write that records how a job ended (finished, failed, retried, released) until it
 * succeeds. Such a write must not be dropped: the job's claim and concurrency slot stay held until
 * it lands, so a dropped write strands the job (and, after a restart, runs it again although it
 * already ran). Any error is retried with capped backoff, whatever its kind: the database may be
 * restarting, a connection may have been cut, a lock may be held. One warning is logged when the
 * write first fails and one line when it finally succeeds. Gives up (rethrowing the last error)
 * only once `giveUp` fires: the process has been told to stop and can wait no longer.
 */
export function persistently<T>(
  write: () => Promise<T>,
  giveUp: AbortSignal,
  logger: Logger,
  fields: Record<string, unknown>,
): Promise<T> {
  const started = Date.now();
  // The common case, a write that succeeds at once, costs its own promise and nothing more.
  let first: Promise<T>;
  try {
    first = write();
  } catch (error) {
    first = Promise.reject(error);
  }
  return first.catch((error: unknown) => {
    if (giveUp.aborted) throw error;
    logger.warn("recording the job's outcome failed; retrying until it succeeds (the job stays claimed meanwhile)", {
      ...fields,
      error,
    });
    return retry(write, giveUp, logger, fields, started);
  });
}

/** The retries of {@link persistently}, after its first try failed at `started`. */
async function retry<T>(
  write: () => Promise<T>,
  giveUp: AbortSignal,
  logger: Logger,
  fields: Record<string, unknown>,
  started: number,
): Promise<T> {
  const backoff = new Backoff(FIRST_RETRY_MS, LONGEST_RETRY_MS);
  await sleep(backoff.next(), giveUp);
  for (;;) {
    try {
      const result = await write();
      logger.info("recording the job's outcome succeeded after retries", {
        ...fields,
        attempts: backoff.count + 1,
        ms: Date.now() - started,
      });
      return result;
    } catch (error) {
      if (giveUp.aborted) throw error;
      await sleep(backoff.next(), giveUp);
    }
  }
}
