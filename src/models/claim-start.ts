import type { Db } from "../database/dialect.js";

/**
 * Mark the claims `processId` holds on `jobIds` as started (their handlers have started), those
 * not marked already. One statement for the whole group; a claim taken away meanwhile is simply
 * not there to mark. The worker's hot path marks inside the claim and the finish statements
 * instead (see `claimJobs`, `finishClaimedJobs`); this is the portable form.
 */
export async function markClaimsStarted(
  db: Db,
  processId: number,
  jobIds: readonly number[],
  now: Date,
): Promise<void> {
  if (jobIds.length === 0) return;
  await db
    .updateTable("firm_queue_claimed_executions")
    .set({ started_at: now })
    .where("process_id", "=", processId)
    .where("job_id", "in", jobIds)
    .where("started_at", "is", null)
    .execute();
}

/** Jobs whose claims `processId` holds and whose handler has started (see {@link markClaimsStarted}). */
export async function startedClaimJobIds(db: Db, processId: number): Promise<number[]> {
  const rows = await db
    .selectFrom("firm_queue_claimed_executions")
    .select("job_id")
    .where("process_id", "=", processId)
    .where("started_at", "is not", null)
    .execute();
  return rows.map((row) => Number(row.job_id));
}
