import type { Logger } from "../logger.js";

/** Stores progress values: job id and JSON, the latest of each job. */
export type WriteProgress = (values: readonly (readonly [number, string])[]) => Promise<void>;

/** Least time between two progress writes of one worker, in ms. */
export const PROGRESS_WRITE_INTERVAL_MS = 500;

/**
 * Writes the progress handlers report, throttled: a report only records the value in memory
 * (the latest per job wins) and the values pending are written together at most every
 * {@link PROGRESS_WRITE_INTERVAL_MS}, in the background. A handler never waits for the
 * database, and a failed write is logged, not thrown.
 */
export class ProgressReporter {
  private readonly pending = new Map<number, string>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: WriteProgress,
    private readonly logger: Logger,
    private readonly interval = PROGRESS_WRITE_INTERVAL_MS,
  ) {}

  /** Record job `jobId`'s latest progress (already encoded JSON). */
  report(jobId: number, json: string): void {
    this.pending.set(jobId, json);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.interval);
      this.timer.unref?.();
    }
  }

  /** The job's handler has ended: write its last reported value now rather than after the throttle. */
  settle(jobId: number): void {
    if (this.pending.has(jobId)) this.flush();
  }

  /** Write everything pending; resolves when written (or failed and logged). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return this.writing;
    const batch = [...this.pending];
    this.pending.clear();
    // One write at a time, in order, so a later value never lands before an earlier one.
    this.writing = this.writing.then(() =>
      this.write(batch).catch((error: unknown) =>
        this.logger.warn("could not record job progress; the next report will try again", {
          jobIds: batch.map(([jobId]) => jobId),
          error,
        }),
      ),
    );
    return this.writing;
  }
}
