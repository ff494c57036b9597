import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { inOneBlock } from "./mysql-block.js";

/**
 * MariaDB's record of successful attempts in one round trip (one anonymous block, one
 * transaction), for jobs without a concurrency key (see `finishClaimedJobs`), each statement over
 * the literal list of `jobIds`:
 * - the claims of `startedIds` (jobs that left the worker's buffer since the last batch) are
 *   marked started;
 * - the claims of `jobIds` this process holds are deleted (the stale-worker guard); unless that is
 *   every one of them, the block rolls back and records nothing;
 * - the jobs are marked finished, or deleted when finished jobs are not kept; each job row is
 *   locked first (by the UPDATE, or by a locking read before the DELETE), so an enqueue adding a
 *   dependent to one of them has committed its `has_dependents` mark before, or waits for this
 *   commit and sees the job finished;
 * - if one of the jobs has dependents after all (a dependent added while it ran), the block
 *   rolls back: the portable transaction finishes the batch and releases them.
 * Returns the ids recorded: all or none. The claims are deleted by `job_id` and `process_id`
 * together, one index lookup per job: through a range of `(process_id, job_id)`, a long-lived
 * process would walk the entries of all the claims it has deleted that InnoDB's purge has not
 * removed yet (on a 20,000-job drain a block took three to five times longer by its tenth batch
 * of 1,000).
 */
export async function finishOnMariadb(db: Db, batch: FinishBatch): Promise<number[]> {
  const ids = sql.join(batch.jobIds.map((id) => sql`${id}`));
  const record = batch.preserve
    ? sql`UPDATE firm_queue_jobs SET finished_at = ${batch.now}, updated_at = ${batch.now}, attempts = attempts + 1
        WHERE id IN (${ids})`
    : sql`DELETE FROM firm_queue_jobs WHERE id IN (${ids})`;
  const marks =
    batch.startedIds.length === 0
      ? sql``
      : sql`UPDATE firm_queue_claimed_executions SET started_at = ${batch.now}
          WHERE job_id IN (${sql.join(batch.startedIds.map((id) => sql`${id}`))})
          AND process_id = ${batch.processId} AND started_at IS NULL;`;
  // Kept jobs: the UPDATE locks the rows, and a read after it sees their latest mark. Deleted
  // jobs: the rows are locked and their marks read before the DELETE.
  const recordUnlessDependents = batch.preserve
    ? sql`${record};
        IF EXISTS (SELECT 1 FROM firm_queue_jobs WHERE id IN (${ids}) AND has_dependents <> 0) THEN
          ROLLBACK;
          SELECT 0 AS recorded;
        ELSE
          COMMIT;
          SELECT 1 AS recorded;
        END IF`
    : sql`SELECT COALESCE(SUM(has_dependents), 0) INTO dependents FROM firm_queue_jobs WHERE id IN (${ids}) FOR UPDATE;
        IF dependents > 0 THEN
          ROLLBACK;
          SELECT 0 AS recorded;
        ELSE
          ${record};
          COMMIT;
          SELECT 1 AS recorded;
        END IF`;
  const [[outcome]] = (await inOneBlock(
    db,
    sql`DECLARE dependents INT DEFAULT 0;
      START TRANSACTION;
      ${marks}
      DELETE FROM firm_queue_claimed_executions WHERE job_id IN (${ids}) AND process_id = ${batch.processId};
      IF ROW_COUNT() < ${batch.jobIds.length} THEN
        ROLLBACK;
        SELECT 0 AS recorded;
      ELSE
        ${recordUnlessDependents};
      END IF`,
    { endsItself: true },
  )) as [{ recorded: number | string }[]];
  return Number(outcome?.recorded) === 1 ? [...batch.jobIds] : [];
}
