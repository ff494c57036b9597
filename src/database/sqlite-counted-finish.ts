import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { markStarted, recordHeld } from "./sqlite-finish.js";

/** Thrown inside the transaction to undo it: a count reached 0 (see {@link finishCountedOnSqlite}). */
class CountReachedZero extends Error {}

/**
 * SQLite's record of successful attempts of jobs that have dependents or belong to a batch, inside
 * `transaction` (`BEGIN IMMEDIATE`: writers are serialized, so every read here is the truth until
 * the commit), as long as none of the counts it lowers reaches 0. The claims this process holds
 * among `jobIds` are deleted (the stale-worker guard: only the ids returned are touched) and their
 * jobs recorded; their open edges are marked finished and each dependent's count of unmet
 * dependencies lowered by its edges (a dependent already ended, or among the jobs just recorded,
 * is left as it is); their batch memberships are marked finished and each batch's counts moved.
 * Returns the ids recorded.
 *
 * A count that reaches 0 means a dependent to dispatch or a batch to end, which the portable
 * transaction does: the transaction is then rolled back (the marks of `startedIds` with it: the
 * portable transaction writes them) and nothing is recorded. That happens once per dependent or
 * batch, so every other finish writes without reading first. Each statement's text is the same
 * for every batch (the ids travel as one JSON array). The dependents' counts are lowered by one
 * statement that groups the edges itself; the memberships' update returns one row per membership,
 * grouped here into one update of the batches per amount (a finish batch is rarely in more than
 * one batch). Memberships are looked up only for the jobs that have a batch (`batchJobIds`).
 *
 * Jobs with a concurrency key, a unique key or a result are not for this path (see
 * `finishClaimedJobs`): edges get no result here.
 */
export async function finishCountedOnSqlite(
  db: Db,
  transaction: <T>(db: Db, work: (trx: Db) => Promise<T>) => Promise<T>,
  batch: FinishBatch,
): Promise<number[]> {
  try {
    return await transaction(db, async (trx) => {
      await markStarted(trx, batch);
      const removed = await recordHeld(trx, batch);
      if (removed.length === 0) return [];
      const ids = JSON.stringify(removed);
      // Each dependent's count is lowered by its open edges from these jobs, grouped in the
      // statement (one row back per dependent, not per edge; the grouped edges are read first and
      // each dependent found by its id). A dependent among the jobs just recorded has its finish
      // time set (or its row deleted): left as it is.
      const { rows: left } = await sql<{ unmet_dependencies: number }>`
        WITH ended AS MATERIALIZED (
          SELECT job_id, COUNT(*) AS amount FROM firm_queue_job_dependencies
          WHERE dependency_id IN (SELECT value FROM json_each(${ids})) AND dependency_state IS NULL
          GROUP BY job_id
        )
        UPDATE firm_queue_jobs SET unmet_dependencies = unmet_dependencies - ended.amount, updated_at = ${batch.now}
        FROM ended WHERE firm_queue_jobs.id = ended.job_id AND firm_queue_jobs.finished_at IS NULL
        RETURNING firm_queue_jobs.unmet_dependencies`.execute(trx);
      if (left.some((row) => row.unmet_dependencies <= 0)) throw new CountReachedZero();
      await sql`UPDATE firm_queue_job_dependencies SET dependency_state = 'finished', result = NULL
        WHERE dependency_id IN (SELECT value FROM json_each(${ids})) AND dependency_state IS NULL`.execute(trx);
      // Jobs in no batch have no membership to look up.
      const inBatch = new Set(batch.batchJobIds);
      const memberIds = removed.filter((id) => inBatch.has(id));
      if (memberIds.length === 0) return removed;
      const { rows: members } = await sql<{ batch_id: number }>`UPDATE firm_queue_batch_jobs SET state = 'finished'
        WHERE job_id IN (SELECT value FROM json_each(${JSON.stringify(memberIds)})) AND state IS NULL
        RETURNING batch_id`.execute(trx);
      for (const [amount, batches] of byAmount(members.map((member) => member.batch_id))) {
        const { rows: left } = await sql<{ pending: number }>`UPDATE firm_queue_batches
          SET pending = pending - ${amount}, finished = finished + ${amount}, updated_at = ${batch.now}
          WHERE id IN (SELECT value FROM json_each(${JSON.stringify(batches)}))
          RETURNING pending`.execute(trx);
        if (left.some((row) => row.pending <= 0)) throw new CountReachedZero();
      }
      return removed;
    });
  } catch (error) {
    if (error instanceof CountReachedZero) return [];
    throw error;
  }
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
