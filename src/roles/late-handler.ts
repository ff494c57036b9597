/**
 * Whether a job's handler outlived its timeout, and when it then really ended. The promise is
 * made only when asked for (a timed-out job that keeps a concurrency slot), not for every job.
 */
export class LateHandler {
  timedOut = false;
  private hasEnded = false;
  private resolveEnded: (() => void) | undefined;
  private endedPromise: Promise<void> | undefined;

  /** The handler has really ended (after its timeout had passed). */
  ended(): void {
    this.hasEnded = true;
    this.resolveEnded?.();
  }

  /** Resolves once {@link ended} has been called (at once if it already was). */
  whenEnded(): Promise<void> {
    this.endedPromise ??= this.hasEnded
      ? Promise.resolve()
      : new Promise<void>((resolve) => (this.resolveEnded = resolve));
    return this.endedPromise;
  }
}
