/**
 * Capped exponential backoff with full jitter: the n-th consecutive failure waits a random time
 * up to `first * 2^(n-1)`, never more than `cap`. The jitter spreads out many processes that
 * lost the database at the same moment, so they do not all come back at the same instant.
 */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly first: number,
    private readonly cap: number,
  ) {}

  /** Consecutive failures so far. */
  get count(): number {
    return this.failures;
  }

  /** One more failure: the delay before the next try, in ms. */
  next(): number {
    this.failures++;
    const ceiling = Math.min(this.cap, this.first * 2 ** Math.min(this.failures - 1, 30));
    return Math.max(this.first / 2, Math.random() * ceiling);
  }

  reset(): void {
    this.failures = 0;
  }
}

/** Sleep `ms`, or less if `signal` fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
