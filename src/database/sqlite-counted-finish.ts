import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { markStarted } from "./sqlite-finish.js";

/**
 * SQLite's record of successful attempts of jobs that have dependents or belong to a batch, inside
 * `transaction` (`BEGIN IMMEDIATE`: writers are serialized, so every read here is the truth until
 * the commit), as long as none of the counts it lowers reaches 0. First one read checks, for the
 * claims this process holds among `jobIds`, whether ending them would bring a dependent's count
 * of unmet dependencies or a batch's pending count to 0: then a dependent is to be dispatched or a
 * batch ended, which the portable transaction does, and nothing is recorded here (the marks of
 * `startedIds` are written all the same). Otherwise the claims are deleted (the stale-worker
 * guard: only the ids returned are touched), the jobs recorded, their open edges marked finished
 * and each dependent's count lowered by its edges (a dependent already ended is left as it is),
 * and their batch memberships marked finished and each batch's counts moved. Returns the ids
 * recorded.
 *
 * Jobs with a concurrency key, a unique key or a result are not for this path (see
 * `finishClaimedJobs`): edges get no result here.
 */
export function finishCountedOnSqlite(
  db: Db,
  transaction: <T>(db: Db, work: (trx: Db) => Promise<T>) => Promise<T>,
  batch: FinishBatch,
): Promise<number[]> {
  return transaction(db, async (trx) => {
    await markStarted(trx, batch);
    const jobIds = JSON.stringify(batch.jobIds);
    const { rows: atZero } = await sql`
      WITH held AS (
        SELECT job_id FROM firm_queue_claimed_executions
        WHERE process_id = ${batch.processId} AND job_id IN (SELECT value FROM json_each(${jobIds}))
      )
      SELECT 1 AS found FROM (
        SELECT job_id, count(*) AS k FROM firm_queue_job_dependencies
        WHERE dependency_id IN (SELECT job_id FROM held) AND dependency_state IS NULL GROUP BY job_id
      ) e CROSS JOIN firm_queue_jobs j
      WHERE j.id = e.job_id AND j.finished_at IS NULL AND j.id NOT IN (SELECT job_id FROM held) AND j.unmet_dependencies - e.k <= 0
      UNION ALL
      SELECT 1 AS found FROM (
        SELECT batch_id, count(*) AS k FROM firm_queue_batch_jobs
        WHERE job_id IN (SELECT job_id FROM held) AND state IS NULL GROUP BY batch_id
      ) e CROSS JOIN firm_queue_batches b
      WHERE b.id = e.batch_id AND b.pending - e.k <= 0
      LIMIT 1`.execute(trx);
    if (atZero.length > 0) return [];
    const { rows } = await sql<{ job_id: number }>`
      DELETE FROM firm_queue_claimed_executions
      WHERE process_id = ${batch.processId} AND job_id IN (SELECT value FROM json_each(${jobIds}))
      RETURNING job_id`.execute(trx);
    if (rows.length === 0) return [];
    const removed = rows.map((row) => row.job_id);
    const ids = JSON.stringify(removed);
    const { rows: jobs } = batch.preserve
      ? await sql<{ id: number; has_dependents: number; batch_id: number | null }>`UPDATE firm_queue_jobs
          SET finished_at = ${batch.now}, updated_at = ${batch.now}, attempts = attempts + 1
          WHERE id IN (SELECT value FROM json_each(${ids})) RETURNING id, has_dependents, batch_id`.execute(trx)
      : await sql<{ id: number; has_dependents: number; batch_id: number | null }>`DELETE FROM firm_queue_jobs
          WHERE id IN (SELECT value FROM json_each(${ids})) RETURNING id, has_dependents, batch_id`.execute(trx);
    const withDependents = jobs.filter((job) => job.has_dependents !== 0).map((job) => job.id);
    if (withDependents.length > 0) {
      const { rows: edges } = await sql<{ job_id: number }>`UPDATE firm_queue_job_dependencies
        SET dependency_state = 'finished', result = NULL
        WHERE dependency_id IN (SELECT value FROM json_each(${JSON.stringify(withDependents)})) AND dependency_state IS NULL
        RETURNING job_id`.execute(trx);
      // A dependent among the jobs just recorded has its finish time set (or its row deleted): left as it is.
      for (const [amount, ids] of byAmount(edges.map((edge) => edge.job_id)))
        await sql`UPDATE firm_queue_jobs SET unmet_dependencies = unmet_dependencies - ${amount}, updated_at = ${batch.now}
          WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND finished_at IS NULL`.execute(trx);
    }
    const inBatch = jobs.filter((job) => job.batch_id !== null).map((job) => job.id);
    if (inBatch.length > 0) {
      const { rows: members } = await sql<{ batch_id: number }>`UPDATE firm_queue_batch_jobs SET state = 'finished'
        WHERE job_id IN (SELECT value FROM json_each(${JSON.stringify(inBatch)})) AND state IS NULL
        RETURNING batch_id`.execute(trx);
      for (const [amount, ids] of byAmount(members.map((member) => member.batch_id)))
        await sql`UPDATE firm_queue_batches
          SET pending = pending - ${amount}, finished = finished + ${amount}, updated_at = ${batch.now}
          WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`.execute(trx);
    }
    return removed;
  });
}

/**
 * The distinct ids of `ids` grouped by how many times each appears: one UPDATE per amount (most
 * often one), each through the primary key. (An UPDATE … FROM a JSON list of pairs had SQLite scan
 * every unfinished job for the `finished_at IS NULL` index.)
 */
function byAmount(ids: readonly number[]): Map<number, number[]> {
  const counts = new Map<number, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  const groups = new Map<number, number[]>();
  for (const [id, amount] of counts) groups.set(amount, [...(groups.get(amount) ?? []), id]);
  return groups;
}
