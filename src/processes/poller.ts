/** A delay long enough to mean "until woken": the timer's own maximum. */
export const UNTIL_WOKEN = 2 ** 31 - 1;

/**
 * The loop every long-running role shares. A subclass implements `poll()`, which does one cycle of
 * work and returns how long to sleep before the next. The sleep can be cut short by `wake()`
 * (new work is likely: a slot freed up, a batch was full) or by `stop()`. An error thrown by one
 * cycle goes to `onPollError` and the loop goes on after the normal delay.
 */
export abstract class Poller {
  private running = false;
  private loop: Promise<void> | undefined;
  private wokenEarly = false;
  private interruptSleep: (() => void) | undefined;

  /** One cycle of work; returns the milliseconds to sleep before the next. */
  protected abstract poll(): Promise<number>;

  /** Called with an error thrown by `poll()`; returns the delay before trying again. */
  protected abstract onPollError(error: unknown): number;

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Run the next cycle now (or right after the current one ends). */
  wake(): void {
    this.wokenEarly = true;
    this.interruptSleep?.();
  }

  /** Stop after the current cycle; resolves once the loop has exited. */
  async stopPolling(): Promise<void> {
    this.running = false;
    this.interruptSleep?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let delay: number;
      try {
        delay = await this.poll();
      } catch (error) {
        delay = this.onPollError(error);
      }
      if (!this.running) break;
      await this.sleep(delay);
    }
  }

  private sleep(milliseconds: number): Promise<void> {
    if (this.wokenEarly) {
      this.wokenEarly = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.min(Math.max(milliseconds, 0), UNTIL_WOKEN));
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.interruptSleep = undefined;
        self.wokenEarly = false;
        resolve();
      }
      this.interruptSleep = done;
    });
  }
}
