import type { Db, Dialect } from "../database/dialect.js";

/**
 * Delete up to `batchSize` batches that ended before `cutoff` and whose jobs are all gone or ended
 * before it too, with their membership rows. A batch is kept while a job of it has not ended (a
 * job that failed for good waits in the failed jobs and may be retried by hand) or ended after
 * the cutoff, and while one of its callback jobs has not ended (its handler may read the batch
 * with `getBatch`). A pending batch is never deleted: it has no end time.
 *
 * Reads the batches table (one row per batch, never per job), the membership rows still there of
 * each batch it looks at (the job cleanup deletes a job's row with the job, see finished-jobs.ts),
 * and its callback jobs by id. Run it in a claim transaction of its own per batch of batches.
 * Batches are looked at in id order after `afterId`: a caller goes on from `lastId`, so batches
 * kept for a callback that has not ended cannot fill every pass. `looked` is how many were
 * looked at (fewer than `batchSize`: the end was reached).
 */
export async function deleteEndedBatches(
  trx: Db,
  dialect: Dialect,
  cutoff: Date,
  batchSize: number,
  afterId = 0,
): Promise<{ readonly deleted: number; readonly looked: number; readonly lastId: number }> {
  const query = trx
    .selectFrom("firm_queue_batches as b")
    .select(["b.id", "b.callbacks"])
    .where("b.state", "<>", "pending")
    .where("b.ended_at", "<", cutoff)
    .where("b.id", ">", afterId)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("firm_queue_batch_jobs as m")
            .innerJoin("firm_queue_jobs as j", "j.id", "m.job_id")
            .select("m.id")
            .whereRef("m.batch_id", "=", "b.id")
            .where((inner) => inner.or([inner("j.finished_at", "is", null), inner("j.finished_at", ">=", cutoff)])),
        ),
      ),
    )
    .orderBy("b.id")
    .limit(batchSize);
  const candidates = await dialect.withSkipLocked(query).execute();
  if (candidates.length === 0) return { deleted: 0, looked: 0, lastId: afterId };
  const lastId = Math.max(...candidates.map((row) => Number(row.id)));
  const callbacksOf = new Map(candidates.map((row) => [Number(row.id), calledIds(row.callbacks)]));
  const callbackIds = [...callbacksOf.values()].flat();
  const live = new Set<number>();
  if (callbackIds.length > 0) {
    const rows = await trx
      .selectFrom("firm_queue_jobs")
      .select("id")
      .where("id", "in", callbackIds)
      .where((eb) => eb.or([eb("finished_at", "is", null), eb("finished_at", ">=", cutoff)]))
      .execute();
    for (const row of rows) live.add(Number(row.id));
  }
  const ids = [...callbacksOf].filter(([, called]) => !called.some((id) => live.has(id))).map(([id]) => id);
  const looked = candidates.length;
  if (ids.length === 0) return { deleted: 0, looked, lastId };
  await trx.deleteFrom("firm_queue_batch_jobs").where("batch_id", "in", ids).execute();
  const result = await trx.deleteFrom("firm_queue_batches").where("id", "in", ids).executeTakeFirst();
  return { deleted: Number(result.numDeletedRows), looked, lastId };
}

/** The callback job ids a batch's callbacks column records (written when it ended). */
function calledIds(callbacks: string): number[] {
  try {
    const parsed = JSON.parse(callbacks) as { called?: unknown };
    return Array.isArray(parsed.called) ? parsed.called.filter((id): id is number => typeof id === "number") : [];
  } catch {
    return [];
  }
}
