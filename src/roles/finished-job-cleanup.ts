import type { Database } from "../database/connection.js";
import type { Logger } from "../logger.js";
import { deleteFinishedJobsBatch } from "../models/finished-jobs.js";

/** When and how the dispatcher deletes old finished jobs. */
export interface CleanupSettings {
  /** Finished jobs older than this many ms are deleted. */
  readonly after: number;
  /** Least time between two cleanup passes, in ms. */
  readonly interval: number;
  /** Jobs deleted per transaction. */
  readonly batchSize: number;
}

/**
 * The dispatcher's periodic cleanup of finished jobs (`clearFinishedJobsAfter`). Each call does at
 * most one small batch, so dispatching scheduled jobs goes on between batches; a full batch means
 * more are waiting and the next batch is due at once, otherwise the next pass waits `interval`.
 */
export class FinishedJobCleanup {
  private nextRunAt = 0;

  constructor(
    readonly settings: CleanupSettings,
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  /** Delete one batch if a pass is due. Returns true when more finished jobs may be waiting. */
  async runIfDue(now: number = Date.now()): Promise<boolean> {
    if (now < this.nextRunAt) return false;
    // Set before the work, so a failing database is not hammered on every poll.
    this.nextRunAt = now + this.settings.interval;
    const cutoff = new Date(this.database.clock.now().getTime() - this.settings.after);
    const { database } = this;
    const deleted = await database.claimTransaction((trx) =>
      deleteFinishedJobsBatch(trx, database.dialect, { cutoff }, this.settings.batchSize),
    );
    if (deleted > 0)
      this.logger.info("deleted old finished jobs", { count: deleted, finishedBefore: cutoff.toISOString() });
    const more = deleted === this.settings.batchSize;
    if (more) this.nextRunAt = now;
    return more;
  }
}
