import type { Db, Dialect } from "../database/dialect.js";

/** Which finished jobs to delete: finished before `cutoff`, optionally of one job name. */
export interface FinishedJobSelection {
  readonly cutoff: Date;
  readonly name?: string;
}

/**
 * Delete up to `batchSize` jobs that finished before the cutoff: select their ids (skipping rows
 * another transaction holds), then delete those rows. Run it in a claim transaction of its own
 * per batch: small batches keep each transaction's locks brief. Their batch memberships are
 * deleted with them. Returns how many jobs were deleted.
 */
export async function deleteFinishedJobsBatch(
  trx: Db,
  dialect: Dialect,
  selection: FinishedJobSelection,
  batchSize: number,
): Promise<number> {
  let query = trx
    .selectFrom("firm_queue_jobs")
    .select("id")
    .where("finished_at", "is not", null)
    .where("finished_at", "<", selection.cutoff)
    .limit(batchSize);
  if (selection.name !== undefined) query = query.where("class_name", "=", selection.name);
  const rows = await dialect.withSkipLocked(query).execute();
  if (rows.length === 0) return 0;
  const ids = rows.map((row) => Number(row.id));
  const result = await trx.deleteFrom("firm_queue_jobs").where("id", "in", ids).executeTakeFirst();
  // Their batch memberships go too (no foreign key: see migration 015), so that deciding whether
  // a batch can be deleted reads only the memberships of jobs still there (ended-batches.ts).
  await trx.deleteFrom("firm_queue_batch_jobs").where("job_id", "in", ids).execute();
  return Number(result.numDeletedRows);
}
