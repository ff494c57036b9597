import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { finishAllOrNone, idList, recordJobs } from "./mysql-finish-steps.js";

/**
 * MariaDB's record of successful attempts of jobs that have dependents or belong to a batch, in
 * one anonymous block (one round trip, one transaction), as long as every claim is still held and
 * none of the counts it lowers reaches 0. The statements are the portable transaction's, each over
 * the literal list of ids (no join through the claims, which would let the optimizer walk a whole
 * table):
 * - the claims of `jobIds` this process holds are deleted (the stale-worker guard); unless that is
 *   every one of them, the block rolls back and writes nothing;
 * - the jobs are recorded finished (or deleted); the UPDATE locks each job row, so an enqueue
 *   adding a dependent to one of them has committed its edge before (and the edge is counted
 *   below) or waits for this commit (and sees the job finished);
 * - each batch's pending count is lowered (its finished count raised) by its open memberships
 *   among the jobs that have a batch (`batchJobIds`), then those are marked finished; then each
 *   dependent's count of unmet dependencies is lowered by its open edges from the jobs (a
 *   dependent already ended, or among the jobs just recorded, is left as it is), then those are
 *   marked finished. Batches before dependents, as the portable transaction locks them.
 * Each count update reads its grouped edges or memberships first (`STRAIGHT_JOIN`): joined the
 * other way round, MariaDB's optimizer reads the derived table once per batch row through the
 * `batch_id` index, every membership of the batch (10,000 rows for a 10,000-job batch, at each
 * finish). The batches' zero check reads the batches the worker knows its jobs belong to
 * (`batchIds`). The open edges are grouped by dependent once, into a JSON list that the count
 * update and the dependents' zero check read (`JSON_TABLE`); that check runs only when a count
 * was lowered.
 * A count at 0 means a batch to end or a dependent to dispatch, which the portable transaction
 * does: the block then rolls everything back (the marks of `startedIds` too: the portable
 * transaction writes them) and nothing is recorded. Returns the ids recorded: all or none.
 *
 * Under READ COMMITTED an UPDATE works on the newest committed row and keeps its lock until the
 * commit, so of two finishes lowering the same count, the second lowers what the first left: only
 * one of them sees 0. Jobs with a concurrency key, a unique key or a result are not for this block
 * (see `finishClaimedJobs`): edges get no result here.
 */
export async function finishCountedOnMariadb(db: Db, batch: FinishBatch): Promise<number[]> {
  const ids = idList(batch.jobIds);
  const record = recordJobs(batch);
  // Jobs in no batch have no membership to look up.
  const members = idList(batch.batchJobIds);
  const batches = idList(batch.batchIds);
  const batchCounts =
    batch.batchJobIds.length === 0
      ? sql``
      : sql`UPDATE (
          SELECT batch_id, COUNT(*) AS k FROM firm_queue_batch_jobs WHERE job_id IN (${members}) AND state IS NULL
          GROUP BY batch_id
        ) e STRAIGHT_JOIN firm_queue_batches b ON b.id = e.batch_id
        SET b.pending = b.pending - e.k, b.finished = b.finished + e.k, b.updated_at = ${batch.now};
        UPDATE firm_queue_batch_jobs SET state = 'finished' WHERE job_id IN (${members}) AND state IS NULL;
        SET reached = EXISTS (SELECT 1 FROM firm_queue_batches WHERE id IN (${batches}) AND pending <= 0);`;
  // The dependents and how many of their open edges these jobs are, read once: the count update
  // and the zero check both join it to the dependents by id.
  const loweredRows = sql`JSON_TABLE(lowered, '$[*]' COLUMNS (job_id BIGINT PATH '$[0]', k INT PATH '$[1]')) e`;
  return finishAllOrNone(
    db,
    batch,
    sql`DECLARE reached BOOLEAN DEFAULT FALSE;
      DECLARE lowered LONGTEXT;`,
    sql`${record};
        ${batchCounts}
        SELECT JSON_ARRAYAGG(JSON_ARRAY(job_id, k)) INTO lowered FROM (
          SELECT job_id, COUNT(*) AS k FROM firm_queue_job_dependencies
          WHERE dependency_id IN (${ids}) AND dependency_state IS NULL GROUP BY job_id
        ) g;
        UPDATE ${loweredRows} STRAIGHT_JOIN firm_queue_jobs p ON p.id = e.job_id
        SET p.unmet_dependencies = p.unmet_dependencies - e.k, p.updated_at = ${batch.now}
        WHERE p.finished_at IS NULL;
        IF NOT reached AND ROW_COUNT() > 0 THEN
          SET reached = EXISTS (
            SELECT 1 FROM ${loweredRows} STRAIGHT_JOIN firm_queue_jobs p ON p.id = e.job_id
            WHERE p.finished_at IS NULL AND p.unmet_dependencies <= 0
          );
        END IF;
        UPDATE firm_queue_job_dependencies SET dependency_state = 'finished', result = NULL
          WHERE dependency_id IN (${ids}) AND dependency_state IS NULL;
        IF reached THEN
          ROLLBACK;
          SELECT 0 AS recorded;
        ELSE
          COMMIT;
          SELECT 1 AS recorded;
        END IF`,
  );
}
