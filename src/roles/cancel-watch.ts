import type { Database } from "../database/connection.js";
import type { Logger } from "../logger.js";
import { cancelledClaimIds } from "../models/job-cancellation.js";
import { Poller } from "../processes/poller.js";

/** How often a worker holding claims asks whether any of them was cancelled, in ms. */
export const CANCEL_CHECK_INTERVAL_MS = 1000;

/** Why a job's AbortSignal fired because the job was cancelled (`firm.jobs.cancel`). */
export class CancelledSignal extends Error {
  constructor(readonly jobId: number) {
    super(`Job ${jobId} was cancelled`);
    this.name = "CancelledSignal";
  }
}

/**
 * A worker's ear for cancels: while it holds claims (running or buffered jobs), one query every
 * {@link CANCEL_CHECK_INTERVAL_MS} lists its claimed jobs whose cancel was requested, and hands
 * the new ones to `onCancelled`. One query per worker, not per job; an idle worker asks nothing.
 */
export class CancelWatch extends Poller {
  private readonly heard = new Set<number>();

  constructor(
    private readonly database: Database,
    private readonly processId: number,
    /** Whether the worker holds any claim now. */
    private readonly holdsClaims: () => boolean,
    private readonly onCancelled: (jobIds: number[]) => void,
    private readonly logger: Logger,
    private readonly interval = CANCEL_CHECK_INTERVAL_MS,
  ) {
    super({ logger, what: "cancel watch", fields: () => ({ processId }) });
  }

  protected async poll(): Promise<number> {
    if (!this.holdsClaims()) {
      this.heard.clear();
      return this.interval;
    }
    const ids = await cancelledClaimIds(this.database.db, this.processId);
    const fresh = ids.filter((id) => !this.heard.has(id));
    // Forget jobs no longer claimed, so the set stays as small as the claims.
    const current = new Set(ids);
    for (const id of this.heard) if (!current.has(id)) this.heard.delete(id);
    for (const id of fresh) this.heard.add(id);
    if (fresh.length > 0) this.onCancelled(fresh);
    return this.interval;
  }

  protected onPollError(error: unknown, repeated: boolean): number {
    if (!repeated) this.logger.warn("could not check for cancelled jobs; trying again", { error });
    return this.interval;
  }
}
