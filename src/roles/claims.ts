import type { Database } from "../database/connection.js";
import type { ClaimedJob } from "../database/claimed-job.js";
import type { QueueSelector } from "./queue-selector.js";
import { claimReadyExecutions, type ClaimTarget } from "../models/ready-execution.js";
import { ProcessRowGoneError } from "../errors.js";

/**
 * Claim up to `limit` ready jobs for `processId` from the queues `selector` picks, polling its
 * targets in order until the limit is reached, and return the claimed jobs' rows in claim order:
 * queue order first, then (priority, id) inside each queue.
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
  onLaterError: (error: unknown) => void = () => undefined,
  /** Leaves queues out of the claim (those with a rate limit: see BudgetClaims). */
  adjustTargets?: (targets: readonly ClaimTarget[]) => readonly ClaimTarget[],
): Promise<ClaimedJob[]> {
  const claimed: ClaimedJob[] = [];
  const targets = await selector.targets(database.db);
  for (const target of adjustTargets === undefined ? targets : adjustTargets(targets)) {
    const remaining = limit - claimed.length;
    if (remaining <= 0) break;
    try {
      claimed.push(...(await claimTarget(database, target, remaining, processId)));
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
  processId: number,
): Promise<ClaimedJob[]> {
  const { claimReady } = database.dialect;
  if (claimReady === undefined) {
    return database.claimTransaction((trx) =>
      claimReadyExecutions(trx, database.dialect, target, limit, processId, database.clock.now()),
    );
  }
  const result = await claimReady(database.db, { ...target, limit, processId, now: database.clock.now() });
  if (result.processGone) throw new ProcessRowGoneError(processId);
  return result.jobs;
}
