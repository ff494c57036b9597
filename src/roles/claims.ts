import type { Database } from "../database/connection.js";
import type { ClaimedJob } from "../database/claimed-job.js";
import type { QueueSelector } from "./queue-selector.js";
import { claimReadyExecutions, type ClaimTarget } from "../models/ready-execution.js";
import { ProcessRowGoneError } from "../errors.js";

/** How a claim is made, besides its size. */
export interface ClaimOptions {
  /**
   * How many of the claimed jobs go straight to free slots (the first, in claim order): their
   * claims are written marked started, so the caller must start exactly those at once (they come
   * back with `claim_started` set; see `markedAtClaim`). The others wait unmarked. Default 0.
   */
  readonly startNow?: number;
  /** Told of a later target's claim that failed after an earlier one's worked (see {@link claimJobs}). */
  readonly onLaterError?: (error: unknown) => void;
  /** Leaves queues out of the claim (those with a rate limit: see BudgetClaims). */
  readonly adjustTargets?: (targets: readonly ClaimTarget[]) => readonly ClaimTarget[];
}

/**
 * Claim up to `limit` ready jobs for `processId` from the queues `selector` picks, polling its
 * targets in order until the limit is reached, and return the claimed jobs' rows in claim order:
 * queue order first, then (priority, id) inside each queue. The first `startNow` of them are
 * marked started by the claim itself (see {@link ClaimOptions.startNow}).
 *
 * Each target is claimed in a transaction of its own, so when a later target's claim fails the
 * earlier ones are already committed: those jobs are returned (the caller must run them) and the
 * error goes to `onLaterError` (the next poll tries that queue again). Only an error before
 * anything was claimed is thrown, and {@link ProcessRowGoneError} whenever it comes: whoever
 * removed the process row (a pruner, a reaper) failed or released the claims it held in the same
 * transaction, those of the earlier targets too, so they are no longer this process's to run.
 */
export async function claimJobs(
  database: Database,
  selector: QueueSelector,
  limit: number,
  processId: number,
  options: ClaimOptions = {},
): Promise<ClaimedJob[]> {
  const { startNow = 0, onLaterError = () => undefined, adjustTargets } = options;
  const claimed: ClaimedJob[] = [];
  const targets = await selector.targets(database.db);
  for (const target of adjustTargets === undefined ? targets : adjustTargets(targets)) {
    const remaining = limit - claimed.length;
    if (remaining <= 0) break;
    const start = Math.max(0, Math.min(remaining, startNow - claimed.length));
    try {
      claimed.push(...(await claimTarget(database, target, remaining, start, processId)));
    } catch (error) {
      if (claimed.length === 0 || error instanceof ProcessRowGoneError) throw error;
      onLaterError(error);
      break;
    }
  }
  return claimed;
}

/**
 * One target's claim: the database's single claim statement where it has one, else the portable
 * claim transaction. Both skip rows other claimers hold and need this process's row.
 */
async function claimTarget(
  database: Database,
  target: ClaimTarget,
  limit: number,
  startNow: number,
  processId: number,
): Promise<ClaimedJob[]> {
  const { claimReady } = database.dialect;
  if (claimReady === undefined) {
    return database.claimTransaction((trx) =>
      claimReadyExecutions(trx, database.dialect, target, limit, processId, database.clock.now(), startNow),
    );
  }
  const result = await claimReady(database.db, { ...target, limit, startNow, processId, now: database.clock.now() });
  if (result.processGone) throw new ProcessRowGoneError(processId);
  return result.jobs;
}
