import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import { blockedKeysWithFreeSlots } from "../models/blocked-execution.js";
import { dispatchContext } from "../lifecycle/dispatch-context.js";
import { JobMoves } from "../lifecycle/job-moves.js";
import { promoteNextBlocked } from "../lifecycle/semaphore-release.js";
import { deleteExpiredSemaphores } from "../models/semaphore.js";

/** What one maintenance pass did. */
export interface MaintenanceResult {
  /** Semaphores deleted because they had not changed for their whole duration. */
  readonly expiredSemaphores: number;
  /** Blocked jobs moved to ready. */
  readonly promoted: number;
}

/** Keys read per query; each key is then promoted in its own short transactions. */
const KEY_PAGE = 100;

/**
 * The failsafe behind concurrency limits. First delete expired semaphores: their slots were
 * held by jobs that never gave them back (a crashed process) or that run longer than
 * `duration`. Then, for every key that has blocked jobs and a free slot (no semaphore, or one
 * with value above zero), not only the keys just expired, promote blocked jobs one at a time
 * through the semaphore until the key has no free slot or no blocked job left. Each promotion
 * is its own transaction and takes its slot like any other job: maintenance never moves a job
 * to ready around the limit.
 */
export async function runConcurrencyMaintenance(
  database: Database,
  policies: JobPolicies,
  now = database.clock.now(),
): Promise<MaintenanceResult> {
  const { db } = database;
  const moves = JobMoves.for(policies.events);
  const context = dispatchContext(database, policies, moves);
  const expiredSemaphores = await database.claimTransaction((trx) => deleteExpiredSemaphores(trx, now));
  let promoted = 0;
  let after: string | null = null;
  for (;;) {
    const keys = await blockedKeysWithFreeSlots(db, after, KEY_PAGE);
    for (const key of keys) {
      while (
        (await database.claimTransaction((trx) => {
          moves?.reset();
          return promoteNextBlocked(trx, context, key, database.clock.now());
        })) !== null
      ) {
        promoted++;
        moves?.emit(policies.events);
      }
    }
    if (keys.length < KEY_PAGE) break;
    after = keys[keys.length - 1]!;
  }
  if (expiredSemaphores > 0 || promoted > 0) {
    policies.logger.info("concurrency maintenance freed slots", { expiredSemaphores, promoted });
  }
  return { expiredSemaphores, promoted };
}
