import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { recordFailedAttempt } from "./failed-attempt.js";
import type { StoredError } from "./failed-execution.js";
import { dispatchStoredJobsNow } from "./job-dispatch.js";
import { markJobFinished } from "./job.js";

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
 * process. Returns the job ids released.
 */
export async function releaseClaims(database: Database, processId: number, jobIds?: readonly number[]): Promise<number[]> {
  return database.dialect.beginClaimTx(database.db, async (trx) => {
    let query = trx.selectFrom("firm_queue_claimed_executions").select("job_id").where("process_id", "=", processId);
    if (jobIds !== undefined) {
      if (jobIds.length === 0) return [];
      query = query.where("job_id", "in", jobIds);
    }
    const rows = await database.dialect.withSkipLocked(query).execute();
    const released = rows.map((row) => Number(row.job_id));
    if (released.length === 0) return [];
    await trx.deleteFrom("firm_queue_claimed_executions").where("job_id", "in", released).execute();
    await dispatchStoredJobsNow(trx, released, new Date());
    return released;
  });
}

/**
 * Record a successful attempt, if `processId` still holds the claim. Returns false (and changes
 * nothing) when it does not.
 */
export async function finishClaimedJob(database: Database, jobId: number, processId: number, preserve: boolean): Promise<boolean> {
  return database.dialect.beginClaimTx(database.db, async (trx) => {
    if (!(await removeClaim(trx, jobId, processId))) return false;
    await markJobFinished(trx, jobId, new Date(), preserve);
    return true;
  });
}

/**
 * Record a failed attempt (see `recordFailedAttempt`), if `processId` still holds the claim.
 * Returns false (and changes nothing) otherwise.
 */
export async function failClaimedJob(database: Database, jobId: number, processId: number, error: StoredError): Promise<boolean> {
  return database.dialect.beginClaimTx(database.db, async (trx) => {
    if (!(await removeClaim(trx, jobId, processId))) return false;
    await recordFailedAttempt(trx, jobId, error, new Date());
    return true;
  });
}
