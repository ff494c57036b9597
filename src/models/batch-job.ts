import type { BulkInsert, Db, Dialect } from "../database/dialect.js";

/** How a job of a batch ended, as its batch counts it. */
export type BatchJobEnd = "finished" | "failed" | "cancelled";

/** Rows per INSERT: keeps every database under its bound-parameter limit. */
const CHUNK = 1000;

/** Record jobs as members of `batchId`, none ended: one multi-row INSERT per 1000 jobs, or the dialect's one statement (`bulk`). */
export async function insertBatchJobs(
  trx: Db,
  batchId: number,
  jobIds: readonly number[],
  now: Date,
  bulk?: BulkInsert,
): Promise<void> {
  if (bulk !== undefined && jobIds.length > 1) return bulk.batchJobs(trx, batchId, jobIds, now);
  for (let start = 0; start < jobIds.length; start += CHUNK) {
    await trx
      .insertInto("firm_queue_batch_jobs")
      .values(
        jobIds.slice(start, start + CHUNK).map((jobId) => ({ batch_id: batchId, job_id: jobId, created_at: now })),
      )
      .execute();
  }
}

/**
 * Of `jobIds`, the jobs that belong to a batch and have not been counted as ended yet: their rows
 * are locked and marked `state`, so each job counts once. Returns, per batch, how many of its jobs
 * this call ended. Reads only the rows of `jobIds` (the unique `job_id` index), never a batch's
 * other jobs.
 */
export async function endBatchJobs(
  trx: Db,
  dialect: Dialect,
  jobIds: readonly number[],
  state: BatchJobEnd,
): Promise<Map<number, number>> {
  const ended = new Map<number, number>();
  for (let start = 0; start < jobIds.length; start += CHUNK) {
    const chunk = jobIds.slice(start, start + CHUNK);
    const rows = await dialect
      .withRowLock(
        trx
          .selectFrom("firm_queue_batch_jobs")
          .select(["job_id", "batch_id"])
          .where("job_id", "in", chunk)
          .where("state", "is", null),
      )
      .execute();
    if (rows.length === 0) continue;
    await trx
      .updateTable("firm_queue_batch_jobs")
      .set({ state })
      .where(
        "job_id",
        "in",
        rows.map((row) => Number(row.job_id)),
      )
      .execute();
    for (const row of rows) {
      const batchId = Number(row.batch_id);
      ended.set(batchId, (ended.get(batchId) ?? 0) + 1);
    }
  }
  return ended;
}
