import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { recordedIds, startedMarks, type RecordedRow } from "./postgres-finish.js";

/**
 * PostgreSQL's record of successful attempts of jobs that have dependents or belong to a batch,
 * in one statement (one round trip, one commit), for as long as none of the counts it lowers
 * reaches 0. Like {@link finishInOneStatement}, it deletes the claims this process still holds
 * among `jobIds` (the stale-worker guard) and records those jobs, marking `startedIds` started;
 * then, for each recorded job that has dependents or is in a batch:
 * - its open dependency edges are marked finished, and each dependent's count of unmet
 *   dependencies lowered by its edges (a dependent already ended, or among the jobs recorded, is
 *   left as it is, as the portable path leaves it);
 * - its batch membership is marked finished, and the batch's pending count lowered and finished
 *   count raised.
 * Batch rows are locked first, then dependents, each in id order (the portable path's order).
 *
 * A count that would reach 0 (or below) means a dependent to dispatch or a batch to end, which
 * the portable transaction does: the WHERE of that UPDATE then divides by zero, which undoes the
 * whole statement, and nothing is recorded. Under READ COMMITTED an UPDATE that meets a row
 * another transaction changed waits for it and evaluates its WHERE and SET again on the newest
 * row, so of two finishes lowering the same count at once, the second computes from what the
 * first wrote: only one can see 0, and that one falls back. Returns the ids recorded.
 *
 * Jobs with a concurrency key, a unique key or a result are not for this statement (see
 * `finishClaimedJobs`): edges get no result here.
 */
export async function finishCountedInOneStatement(db: Db, batch: FinishBatch): Promise<number[]> {
  const ids = `{${batch.jobIds.join(",")}}`;
  const outcome = batch.preserve
    ? sql`UPDATE firm_queue_jobs j SET finished_at = ${batch.now}, updated_at = ${batch.now}, attempts = j.attempts + 1
          FROM removed WHERE j.id = removed.job_id RETURNING j.id, j.has_dependents, j.batch_id`
    : sql`DELETE FROM firm_queue_jobs j USING removed WHERE j.id = removed.job_id RETURNING j.id, j.has_dependents, j.batch_id`;
  return recordedIds(
    db,
    sql<RecordedRow>`
    WITH removed AS (
      DELETE FROM firm_queue_claimed_executions
      WHERE process_id = ${batch.processId} AND job_id = ANY(${ids}::bigint[])
      RETURNING job_id
    ), recorded AS (${outcome}), members AS (
      UPDATE firm_queue_batch_jobs m SET state = 'finished'
      FROM recorded r WHERE m.job_id = r.id AND r.batch_id IS NOT NULL AND m.state IS NULL
      RETURNING m.batch_id
    ), batch_ends AS (
      SELECT batch_id, count(*)::int AS k FROM members GROUP BY batch_id
    ), batches_locked AS (
      SELECT b.id FROM firm_queue_batches b WHERE b.id IN (SELECT batch_id FROM batch_ends) ORDER BY b.id FOR UPDATE
    ), counted AS (
      UPDATE firm_queue_batches b
      SET pending = b.pending - e.k, finished = b.finished + e.k, updated_at = ${batch.now}
      FROM batch_ends e, batches_locked l
      WHERE b.id = e.batch_id AND b.id = l.id AND 0 / GREATEST(b.pending - e.k, 0) = 0
      RETURNING b.id
    ), edges AS (
      UPDATE firm_queue_job_dependencies d SET dependency_state = 'finished', result = NULL
      FROM recorded r WHERE d.dependency_id = r.id AND r.has_dependents <> 0 AND d.dependency_state IS NULL
      RETURNING d.job_id
    ), dependency_ends AS (
      SELECT job_id, count(*)::int AS k FROM edges GROUP BY job_id
    ), dependents_locked AS (
      SELECT j.id FROM firm_queue_jobs j
      WHERE j.id IN (SELECT job_id FROM dependency_ends) AND j.id NOT IN (SELECT id FROM recorded)
        AND (SELECT count(*) FROM counted) >= 0
      ORDER BY j.id FOR UPDATE
    ), lowered AS (
      UPDATE firm_queue_jobs j SET unmet_dependencies = j.unmet_dependencies - e.k, updated_at = ${batch.now}
      FROM dependency_ends e, dependents_locked l
      WHERE j.id = e.job_id AND j.id = l.id
        AND CASE WHEN j.finished_at IS NULL THEN 0 / GREATEST(j.unmet_dependencies - e.k, 0) = 0 ELSE false END
    ), ${startedMarks(batch)}
    SELECT job_id FROM removed`,
  );
}
