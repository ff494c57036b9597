/** How a handler that outlived its timeout ended, later, in the background. */
export type LateEnd = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

/**
 * Run `work` with `signal` (the worker's shutdown signal) and, when `timeoutMs` is set, a
 * deadline. Past the deadline the signal handed to `work` fires with `timeoutError()` as its
 * reason and this rejects with that error at once, without waiting for `work`: a handler that
 * ignores its signal keeps running in the background, but its result no longer counts.
 * `onLateEnd` hears how such a handler eventually ended. Resolves to what `work` returned.
 * Signals travel as getters, so without a timeout a signal nobody reads is never made.
 */
export function runWithTimeout(
  work: (signal: () => AbortSignal) => unknown,
  signal: () => AbortSignal,
  timeoutMs: number | null,
  timeoutError: () => Error,
  onLateEnd: (end: LateEnd) => void,
): Promise<unknown> {
  if (timeoutMs !== null) return runWithDeadline(work, signal, timeoutMs, timeoutError, onLateEnd);
  // No deadline, the common case: the handler's own promise, with no async frame around it.
  try {
    return Promise.resolve(work(signal));
  } catch (error) {
    return Promise.reject(error);
  }
}

async function runWithDeadline(
  work: (signal: () => AbortSignal) => unknown,
  signal: () => AbortSignal,
  timeoutMs: number,
  timeoutError: () => Error,
  onLateEnd: (end: LateEnd) => void,
): Promise<unknown> {
  const deadline = new AbortController();
  const combined = AbortSignal.any([signal(), deadline.signal]);
  const running = Promise.resolve().then(() => work(() => combined));
  let timedOut = false;
  // Also keeps a late rejection from becoming an unhandled rejection.
  running.then(
    () => timedOut && onLateEnd({ ok: true }),
    (error: unknown) => timedOut && onLateEnd({ ok: false, error }),
  );
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      const error = timeoutError();
      deadline.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([running, expired]);
  } finally {
    clearTimeout(timer);
  }
}
