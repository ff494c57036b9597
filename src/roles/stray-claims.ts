/**
 * How long after a failed claim a claim this worker sent may still commit on the server. A claim
 * statement the worker gave up on (its connection dropped or timed out) is not necessarily dead
 * there: the server runs it to its end, waiting for a lock if need be (MariaDB's default lock
 * wait is 50 s), and its claims then belong to this live process without the worker knowing.
 */
export const STRAY_CLAIM_WINDOW_MS = 60_000;

/** How often, within that window, the worker looks for such claims. */
export const STRAY_CLAIM_CHECK_MS = 1_000;

/**
 * When a worker should look for stray claims: claims of its process for jobs it neither runs nor
 * holds in its buffer. Only a failed claim can leave them (a claim committed whose answer was
 * lost, or one that commits after the worker gave up on it), whether it failed the whole poll or
 * only a later queue's part of it, so they are looked for at the next poll after such a failure
 * and then every {@link STRAY_CLAIM_CHECK_MS} until {@link STRAY_CLAIM_WINDOW_MS} have passed
 * since the last failure; a worker whose claims do not fail never looks.
 */
export class StrayClaimChecks {
  private until = 0;
  private next = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** A claim failed: look at the next poll, and for a window after. */
  claimFailed(): void {
    this.until = this.now() + STRAY_CLAIM_WINDOW_MS;
    this.next = 0;
  }

  /** Whether a look is due now. */
  get due(): boolean {
    return this.until > 0 && this.now() >= this.next;
  }

  /** A look was made: the next is due a check interval later, unless the window has closed. */
  checked(): void {
    const now = this.now();
    if (now >= this.until) this.until = 0;
    this.next = now + STRAY_CLAIM_CHECK_MS;
  }

  /** `delay` (a poller's sleep), shortened so that the sleep ends when the next look is due. */
  cap(delay: number): number {
    if (this.until === 0) return delay;
    return Math.min(delay, Math.max(this.next - this.now(), 0));
  }
}
