import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { finishAllOrNone, idList, recordJobs } from "./mysql-finish-steps.js";

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
 * Returns the ids recorded: all or none (see `finishAllOrNone`).
 */
export async function finishOnMariadb(db: Db, batch: FinishBatch): Promise<number[]> {
  const ids = idList(batch.jobIds);
  const record = recordJobs(batch);
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
  return finishAllOrNone(db, batch, sql`DECLARE dependents INT DEFAULT 0;`, recordUnlessDependents);
}
