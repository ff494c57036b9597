// Time for the comparison. Latency is measured across two processes (the job is enqueued in one
// and starts in another), so it needs a clock both read the same way: the system-wide monotonic
// clock behind process.hrtime (CLOCK_MONOTONIC on Linux). performance.now() would not do, since
// each process counts it from its own start.

/** Milliseconds on the machine's monotonic clock, with sub-millisecond precision. */
export function hrNow() {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** @param {number} ms */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Seconds since `start`, a performance.now() reading. @param {number} start */
export function secondsSince(start) {
  return (performance.now() - start) / 1000;
}

/**
 * Reject after `ms` with `message`; the timer is cleared either way.
 * @template T @param {Promise<T>} promise @param {number} ms @param {string} message
 * @returns {Promise<T>}
 */
export function withTimeout(promise, ms, message) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return /** @type {Promise<T>} */ (Promise.race([promise, timeout]).finally(() => clearTimeout(timer)));
}
