import type { Database } from "./database/connection.js";
import type { FinishedJobCleanup } from "./finished-job-cleanup.js";
import type { Logger } from "./logger.js";
import { dispatchStoredJobsNow } from "./models/job-dispatch.js";
import { takeDueScheduledExecutions } from "./models/scheduled-execution.js";
import { Poller } from "./processes/poller.js";

/** A dispatcher's settings, defaults filled in. */
export interface DispatcherSettings {
  /** Sleep between polls when nothing was due, in ms. */
  readonly pollingInterval: number;
  /** Scheduled jobs promoted per transaction. */
  readonly batchSize: number;
}

/**
 * Promote one batch of due scheduled jobs to ready, in (scheduled time, priority, job id) order,
 * in one transaction. Returns how many were promoted.
 */
export async function dispatchScheduledBatch(database: Database, batchSize: number): Promise<number> {
  return database.dialect.beginClaimTx(database.db, async (trx) => {
    const now = new Date();
    const jobIds = await takeDueScheduledExecutions(database, trx, batchSize, now);
    await dispatchStoredJobsNow(trx, jobIds, now);
    return jobIds.length;
  });
}

/** Promote every due scheduled job, batch after batch. Returns the total promoted. */
export async function dispatchAllDue(database: Database, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const promoted = await dispatchScheduledBatch(database, batchSize);
    total += promoted;
    if (promoted < batchSize) return total;
  }
}

/** The role that moves scheduled jobs to ready when their time comes. */
export class Dispatcher extends Poller {
  constructor(
    readonly settings: DispatcherSettings,
    private readonly database: Database,
    private readonly logger: Logger,
    private readonly onError: (error: unknown) => void,
    /** Deletes old finished jobs between dispatches; none when `clearFinishedJobsAfter` is false. */
    private readonly cleanup?: FinishedJobCleanup,
  ) {
    super();
  }

  protected async poll(): Promise<number> {
    const promoted = await dispatchScheduledBatch(this.database, this.settings.batchSize);
    if (promoted > 0) this.logger.debug("scheduled jobs are due and now ready", { count: promoted });
    const moreToClean = (await this.cleanup?.runIfDue()) ?? false;
    // A full batch means more may be due already: go again at once.
    return promoted === this.settings.batchSize || moreToClean ? 0 : this.settings.pollingInterval;
  }

  protected onPollError(error: unknown): number {
    this.onError(error);
    return this.settings.pollingInterval;
  }
}
