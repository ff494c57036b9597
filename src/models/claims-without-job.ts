import type { Db } from "../database/dialect.js";

/**
 * Remove up to `limit` claims whose job row is gone (deleted behind firm-queue's back: no path of
 * its own deletes a claimed job, and the claims table has no foreign key to the jobs table to do
 * it) and return their job ids. The read locks nothing; the delete needs no second look, because
 * a job id is never handed out again: a claim whose job is gone now stays without one.
 */
export async function removeClaimsWithoutJob(db: Db, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom("firm_queue_claimed_executions as claim")
    .select("claim.job_id")
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom("firm_queue_jobs as job").select("job.id").whereRef("job.id", "=", "claim.job_id"))),
    )
    .limit(limit)
    .execute();
  const jobIds = rows.map((row) => Number(row.job_id));
  if (jobIds.length > 0) await db.deleteFrom("firm_queue_claimed_executions").where("job_id", "in", jobIds).execute();
  return jobIds;
}

/** Whether job `jobId` still has its row. */
export async function jobRowExists(db: Db, jobId: number): Promise<boolean> {
  const row = await db.selectFrom("firm_queue_jobs").select("id").where("id", "=", jobId).executeTakeFirst();
  return row !== undefined;
}
