import { Backoff } from "../backoff.js";
import type { Logger } from "../logger.js";

/** A delay long enough to mean "until woken": the timer's own maximum. */
export const UNTIL_WOKEN = 2 ** 31 - 1;

/** Longest wait between tries while polls keep failing (unless the normal delay is longer). */
export const LONGEST_ERROR_BACKOFF_MS = 10_000;

/** Who hears that a run of failed polls has ended. */
export interface OutageLog {
  readonly logger: Logger;
  /** What polls, for the log line: "worker", "dispatcher", … */
  readonly what: string;
  readonly fields?: () => Record<string, unknown>;
}

/**
 * The loop every long-running role shares. A subclass implements `poll()`, which does one cycle of
 * work and returns how long to sleep before the next. The sleep can be cut short by `wake()`
 * (new work is likely: a slot freed up, a batch was full) or by `stop()`. An error thrown by one
 * cycle goes to `onPollError`; while cycles keep failing (the database is down) the loop backs
 * off exponentially, with jitter, up to {@link LONGEST_ERROR_BACKOFF_MS}, and only the first
 * error of such an outage is meant to be reported (`repeated` is false for it). When a cycle
 * works again, one line says how long the outage lasted.
 */
export abstract class Poller {
  private running = false;
  private loop: Promise<void> | undefined;
  private wokenEarly = false;
  private interruptSleep: (() => void) | undefined;
  private backoff: Backoff | undefined;
  private outageStartedAt = 0;

  constructor(private readonly outageLog?: OutageLog) {}

  /** One cycle of work; returns the milliseconds to sleep before the next. */
  protected abstract poll(): Promise<number>;

  /**
   * Called with an error thrown by `poll()`; returns the normal delay before trying again (the
   * loop may wait longer, backing off). `repeated`: an earlier poll failed too and nothing has
   * worked since, so the error has been reported already.
   */
  protected abstract onPollError(error: unknown, repeated: boolean): number;

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
        if (this.backoff) this.recovered();
      } catch (error) {
        const repeated = this.backoff !== undefined;
        delay = this.onPollError(error, repeated);
        if (!repeated) {
          this.outageStartedAt = Date.now();
          this.backoff = new Backoff(Math.max(delay, 50), Math.max(delay, LONGEST_ERROR_BACKOFF_MS));
        }
        if (delay < UNTIL_WOKEN) delay = Math.max(delay / 2, this.backoff!.next());
      }
      if (!this.running) break;
      await this.sleep(delay);
    }
  }

  private recovered(): void {
    const failedPolls = this.backoff!.count;
    this.backoff = undefined;
    this.outageLog?.logger.info(
      `${this.outageLog.what} works again after failing for ${Date.now() - this.outageStartedAt} ms`,
      {
        ...this.outageLog.fields?.(),
        failedPolls,
      },
    );
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
