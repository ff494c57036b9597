import { toTimerMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { positive, rejectUnknownKeys } from "../option-checks.js";
import type { WaitLimits } from "../processes/job-waiters.js";

export type { EndedJob } from "../processes/job-waiters.js";

/** Options of `firm.waitFor` (and the waiting part of `job.enqueueAndWait`). */
export interface WaitForOptions {
  /** Give up after this long with a WaitTimeoutError (the job goes on). Default: wait as long as it takes. */
  readonly timeout?: Duration;
  /** Give up when this signal aborts, rejecting with its reason (the job goes on). */
  readonly signal?: AbortSignal;
}

/** The keys of {@link WaitForOptions}. */
export const WAIT_OPTION_KEYS: ReadonlySet<string> = new Set(["timeout", "signal"]);

/** Check `waitFor`'s options (`where` names the call in messages) and turn them into limits. */
export function resolveWaitOptions(options: WaitForOptions | undefined, where: string): WaitLimits {
  if (options === undefined) return {};
  rejectUnknownKeys(options, WAIT_OPTION_KEYS, `${where} option`);
  const { timeout, signal } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ConfigurationError(`${where} option signal must be an AbortSignal`);
  }
  return {
    ...(timeout === undefined
      ? {}
      : { timeoutMs: positive(toTimerMilliseconds(timeout, `${where} option timeout`), `${where} option timeout`) }),
    ...(signal === undefined ? {} : { signal }),
  };
}
