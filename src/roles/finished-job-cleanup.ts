import type { Database } from "../database/connection.js";
import type { Logger } from "../logger.js";
import { deleteFinishedJobsBatch } from "../models/finished-jobs.js";
import { deleteEndedBatches } from "../models/ended-batches.js";

/** When and how the dispatcher deletes old finished jobs. */
export interface CleanupSettings {
  /** Finished jobs older than this many ms are deleted. */
  readonly after: number;
  /** Least time between two cleanup passes, in ms. */
  readonly interval: number;
  /** Jobs deleted per transaction (and ended batches looked at per transaction). */
  readonly batchSize: number;
}

/**
 * The dispatcher's periodic cleanup of finished jobs (`clearFinishedJobsAfter`), and of batches
 * that ended before the same cutoff once their jobs are gone. Each call does at most one small
 * batch of each, so dispatching scheduled jobs goes on between batches; a full batch means
 * more are waiting and the next batch is due at once, otherwise the next pass waits `interval`.
 */
export class FinishedJobCleanup {
  private nextRunAt = 0;
  /** Where the next look at ended batches starts (batch ids after it). */
  private batchesAfterId = 0;

  constructor(
    readonly settings: CleanupSettings,
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  /**
   * Delete one batch of finished jobs and look at one batch of ended batches (see
   * ended-batches.ts), if a pass is due. Returns true when more may be waiting.
   */
  async runIfDue(now: number = Date.now()): Promise<boolean> {
    if (now < this.nextRunAt) return false;
    // Set before the work, so a failing database is not hammered on every poll.
    this.nextRunAt = now + this.settings.interval;
    const cutoff = new Date(this.database.clock.now().getTime() - this.settings.after);
    const { database } = this;
    const { batchSize } = this.settings;
    const deleted = await database.claimTransaction((trx) =>
      deleteFinishedJobsBatch(trx, database.dialect, { cutoff }, batchSize),
    );
    if (deleted > 0)
      this.logger.info("deleted old finished jobs", { count: deleted, finishedBefore: cutoff.toISOString() });
    const batches = await database.claimTransaction((trx) =>
      deleteEndedBatches(trx, database.dialect, cutoff, batchSize, this.batchesAfterId),
    );
    // Go on after the batches kept (a callback not ended yet) next time; from the start once past the end.
    this.batchesAfterId = batches.looked === batchSize ? batches.lastId : 0;
    if (batches.deleted > 0)
      this.logger.info("deleted old ended batches", { count: batches.deleted, endedBefore: cutoff.toISOString() });
    const more = deleted === batchSize || batches.looked === batchSize;
    if (more) this.nextRunAt = now;
    return more;
  }
}
