/**
 * Listens for the database's own word that jobs became ready, from any process (PostgreSQL's
 * LISTEN/NOTIFY). Calls `onReady` for each notification and `onError` when the connection is lost
 * (it reconnects by itself); resolves to the function that stops listening.
 */
export type ReadyListener = (onReady: () => void, onError: (error: unknown) => void) => Promise<() => Promise<void>>;

/**
 * Wakes this process's waiting workers as soon as jobs may be ready, instead of at their next
 * poll: after this process enqueues or dispatches jobs, and, where the database can announce it
 * (PostgreSQL), when any process does. Polling remains the safety net: a lost notification only
 * costs a polling interval.
 */
export class JobsReadySignal {
  private readonly wakers = new Map<() => void, (error: unknown) => void>();
  private stopListening: Promise<(() => Promise<void>) | undefined> | undefined;

  constructor(private readonly listen?: ReadyListener) {}

  /** Jobs may be ready now: wake every subscribed worker of this process. */
  notify(): void {
    for (const wake of this.wakers.keys()) wake();
  }

  /**
   * Call `wake` whenever jobs may have become ready (`onError` hears of a lost notification
   * connection). Returns the function that unsubscribes.
   */
  subscribe(wake: () => void, onError: (error: unknown) => void = () => undefined): () => Promise<void> {
    this.wakers.set(wake, onError);
    if (this.listen && !this.stopListening) {
      this.stopListening = this.listen(
        () => this.notify(),
        (error) => {
          for (const report of this.wakers.values()) report(error);
        },
      ).catch((error: unknown) => {
        for (const report of this.wakers.values()) report(error);
        return undefined;
      });
    }
    return async () => {
      this.wakers.delete(wake);
      if (this.wakers.size === 0) await this.close();
    };
  }

  /** Stop listening to the database (subscribers stay, and still hear this process's notify). */
  async close(): Promise<void> {
    const stopping = this.stopListening;
    this.stopListening = undefined;
    const stop = await stopping;
    await stop?.();
  }
}
