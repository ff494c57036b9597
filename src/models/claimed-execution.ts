import type { JobPolicies } from "../job-policies.js";
import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { dispatchContext } from "./dispatch-context.js";
import { recordFailedAttempt, type FailedAttemptOutcome } from "./failed-attempt.js";
import { dispatchStoredJobsNow } from "./job-dispatch.js";
import { markJobFinished } from "./job.js";
import { findSlotHolder, releaseSemaphoreAndPromote, releaseSemaphoresForRequeue, type SlotHolder } from "./semaphore-release.js";

/**
 * Give up the claim `processId` holds on a job. Returns false when the claim is no longer there
 * (recovered after a crash, released on shutdown, discarded): the caller then must not touch the
 * job, because someone else owns it now. This is the stale-worker guard.
 */
export async function removeClaim(trx: Db, jobId: number, processId: number | null): Promise<boolean> {
  const result = await trx
    .deleteFrom("firm_queue_claimed_executions")
    .where("job_id", "=", jobId)
    .where("process_id", processId === null ? "is" : "=", processId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Put claimed jobs back in line without counting an attempt (graceful shutdown that ran out of
 * time, a process deregistering). `jobIds` limits it to those jobs; otherwise every claim of the
 * process. A job holding a concurrency slot gives it back and takes it again through the
 * semaphore in the same transaction, so it keeps its place. Returns the job ids released.
 */
export async function releaseClaims(database: Database, policies: JobPolicies, processId: number, jobIds?: readonly number[]): Promise<number[]> {
  return database.dialect.beginClaimTx(database.db, async (trx) => {
    let query = trx.selectFrom("firm_queue_claimed_executions").select("job_id").where("process_id", "=", processId);
    if (jobIds !== undefined) {
      if (jobIds.length === 0) return [];
      query = query.where("job_id", "in", jobIds);
    }
    const rows = await database.dialect.withSkipLocked(query).execute();
    const released = rows.map((row) => Number(row.job_id));
    if (released.length === 0) return [];
    const now = new Date();
    const context = dispatchContext(database, policies);
    const holders = await trx.selectFrom("firm_queue_jobs").select(["class_name", "concurrency_key"]).where("id", "in", released).execute();
    await trx.deleteFrom("firm_queue_claimed_executions").where("job_id", "in", released).execute();
    await releaseSemaphoresForRequeue(trx, context, holders.map((row): SlotHolder => ({ jobName: row.class_name, concurrencyKey: row.concurrency_key })), now);
    await dispatchStoredJobsNow(trx, released, now, context);
    return released;
  });
}

/**
 * Record a successful attempt, if `processId` still holds the claim, and hand the job's
 * concurrency slot (if any) to the next blocked job, all in one transaction. Returns false
 * (and changes nothing) when the claim is gone.
 */
export async function finishClaimedJob(
  database: Database,
  policies: JobPolicies,
  jobId: number,
  processId: number,
  preserve: boolean,
): Promise<boolean> {
  return database.dialect.beginClaimTx(database.db, async (trx) => {
    if (!(await removeClaim(trx, jobId, processId))) return false;
    const now = new Date();
    // Read before the row may be deleted: the slot is released after the job is marked finished.
    const holder = await findSlotHolder(trx, jobId);
    await markJobFinished(trx, jobId, now, preserve);
    if (holder) await releaseSemaphoreAndPromote(trx, dispatchContext(database, policies), holder, now);
    return true;
  });
}

/**
 * Record a failed attempt (see `recordFailedAttempt`: retried, failed or discarded per the job's
 * retry policy), if `processId` still holds the claim. Returns null (and changes nothing)
 * otherwise.
 */
export async function failClaimedJob(
  database: Database,
  policies: JobPolicies,
  jobId: number,
  processId: number,
  error: unknown,
): Promise<FailedAttemptOutcome | null> {
  return database.dialect.beginClaimTx(database.db, async (trx) => {
    if (!(await removeClaim(trx, jobId, processId))) return null;
    return recordFailedAttempt(trx, jobId, error, new Date(), dispatchContext(database, policies));
  });
}
