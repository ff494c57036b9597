import { repeatBatches } from "../batches.js";
import { runConcurrencyMaintenance } from "./concurrency-maintenance.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { FinishedJobCleanup } from "./finished-job-cleanup.js";
import type { Logger } from "../logger.js";
import { dispatchContext, dispatchStoredJobsNow } from "../lifecycle/job-dispatch.js";
import { JobMoves } from "../lifecycle/job-moves.js";
import { releaseDependents } from "../lifecycle/dependency-release.js";
import { takeDueScheduledExecutions } from "../models/scheduled-execution.js";
import { Poller } from "../processes/poller.js";

/** A dispatcher's settings, defaults filled in. */
export interface DispatcherSettings {
  /** Sleep between polls when nothing was due, in ms. */
  readonly pollingInterval: number;
  /** Scheduled jobs promoted per transaction. */
  readonly batchSize: number;
  /** Milliseconds between concurrency maintenance passes, or false for none. */
  readonly concurrencyMaintenanceInterval: number | false;
}

/**
 * Dispatch one batch of due scheduled jobs, in (scheduled time, priority, job id) order, in one
 * transaction: each becomes ready, or blocked if its concurrency key has no free slot. Returns
 * how many were dispatched.
 */
export async function dispatchScheduledBatch(
  database: Database,
  policies: JobPolicies,
  batchSize: number,
): Promise<number> {
  const moves = JobMoves.for(policies.events);
  const promoted = await database.claimTransaction(async (trx) => {
    moves?.reset();
    const now = database.clock.now();
    const jobIds = await takeDueScheduledExecutions(trx, database.dialect, batchSize, now);
    const context = dispatchContext(database, policies, moves);
    const { discarded } = await dispatchStoredJobsNow(trx, jobIds, now, context);
    // A job dropped by its concurrency limit never ends: jobs waiting for it take it as cancelled.
    if (discarded.length > 0) await releaseDependents(trx, context, discarded, "cancelled", now);
    return jobIds.length;
  });
  moves?.emit(policies.events);
  if (promoted > 0) database.jobsReady.notify();
  return promoted;
}

/** Dispatch every due scheduled job, batch after batch. Returns the total dispatched. */
export function dispatchAllDue(database: Database, policies: JobPolicies, batchSize: number): Promise<number> {
  return repeatBatches(batchSize, () => dispatchScheduledBatch(database, policies, batchSize));
}

/**
 * The role that moves scheduled jobs on when their time comes, and runs concurrency
 * maintenance (once at start, then every `concurrencyMaintenanceInterval`).
 */
export class Dispatcher extends Poller {
  private nextMaintenanceAt = 0;

  constructor(
    readonly settings: DispatcherSettings,
    private readonly database: Database,
    private readonly policies: JobPolicies,
    private readonly logger: Logger,
    private readonly onError: (error: unknown) => void,
    /** Deletes old finished jobs between dispatches; none when `clearFinishedJobsAfter` is false. */
    private readonly cleanup?: FinishedJobCleanup,
  ) {
    super({ logger, what: "dispatcher" });
  }

  protected async poll(): Promise<number> {
    await this.maintainIfDue();
    const promoted = await dispatchScheduledBatch(this.database, this.policies, this.settings.batchSize);
    if (promoted > 0) this.logger.debug("scheduled jobs are due and dispatched", { count: promoted });
    const moreToClean = (await this.cleanup?.runIfDue()) ?? false;
    // A full batch (of due jobs or of finished jobs to delete) means there may be more: go again at once.
    const delay = promoted === this.settings.batchSize || moreToClean ? 0 : this.settings.pollingInterval;
    const interval = this.settings.concurrencyMaintenanceInterval;
    return interval === false ? delay : Math.max(0, Math.min(delay, this.nextMaintenanceAt - Date.now()));
  }

  protected onPollError(error: unknown, repeated: boolean): number {
    if (!repeated) this.onError(error);
    return this.settings.pollingInterval;
  }

  private async maintainIfDue(): Promise<void> {
    const interval = this.settings.concurrencyMaintenanceInterval;
    if (interval === false || Date.now() < this.nextMaintenanceAt) return;
    // Scheduled before running, so a pass that keeps failing is not retried on every poll.
    this.nextMaintenanceAt = Date.now() + interval;
    await runConcurrencyMaintenance(this.database, this.policies);
  }
}
