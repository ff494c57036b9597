import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";

/**
 * SQLite's record of successful attempts, inside `transaction` (`BEGIN IMMEDIATE`): one
 * `DELETE … RETURNING` removes the claims this process still holds among `jobIds` (the
 * stale-worker guard: only the ids it returns are touched), then those jobs are marked finished,
 * or deleted when finished jobs are not kept; the claims of `startedIds` (jobs that left the
 * worker's buffer since the last batch) are marked started first. Returns the ids recorded. The ids travel as one JSON
 * array (`json_each`), so each statement's text, and its prepared statement, is the same for
 * every batch. For jobs without a concurrency key only (see `finishClaimedJobs`).
 *
 * A job that has dependents goes to the portable transaction, which releases them: when one of
 * `jobIds` has some (a dependent added while it ran; writers are serialized, so this read is the
 * truth), nothing is recorded here and every job goes there.
 */
export function finishOnSqlite(
  db: Db,
  transaction: <T>(db: Db, work: (trx: Db) => Promise<T>) => Promise<T>,
  batch: FinishBatch,
): Promise<number[]> {
  return transaction(db, async (trx) => {
    await markStarted(trx, batch);
    const { rows: dependents } = await sql`SELECT 1 AS found FROM firm_queue_jobs
      WHERE id IN (SELECT value FROM json_each(${JSON.stringify(batch.jobIds)})) AND has_dependents = 1 LIMIT 1`.execute(
      trx,
    );
    if (dependents.length > 0) return [];
    return recordHeld(trx, batch);
  });
}

/**
 * The common step of SQLite's finishes: delete the claims this process still holds among
 * `batch.jobIds` (the stale-worker guard: only the ids returned are touched) and record those
 * jobs finished, or delete them when finished jobs are not kept. Returns the ids recorded.
 */
export async function recordHeld(trx: Db, batch: FinishBatch): Promise<number[]> {
  const { rows } = await sql<{ job_id: number }>`
    DELETE FROM firm_queue_claimed_executions
    WHERE process_id = ${batch.processId} AND job_id IN (SELECT value FROM json_each(${JSON.stringify(batch.jobIds)}))
    RETURNING job_id`.execute(trx);
  if (rows.length === 0) return [];
  const removed = rows.map((row) => row.job_id);
  const ids = JSON.stringify(removed);
  if (batch.preserve) {
    await sql`UPDATE firm_queue_jobs SET finished_at = ${batch.now}, updated_at = ${batch.now}, attempts = attempts + 1
      WHERE id IN (SELECT value FROM json_each(${ids}))`.execute(trx);
  } else {
    await sql`DELETE FROM firm_queue_jobs WHERE id IN (SELECT value FROM json_each(${ids}))`.execute(trx);
  }
  return removed;
}

/**
 * Mark the claims of `batch.startedIds` (jobs that left the worker's buffer since the last batch)
 * started, inside a finish's transaction: written whether or not the finish records its jobs.
 */
export async function markStarted(trx: Db, batch: FinishBatch): Promise<void> {
  if (batch.startedIds.length === 0) return;
  await sql`UPDATE firm_queue_claimed_executions SET started_at = ${batch.now}
    WHERE process_id = ${batch.processId} AND job_id IN (SELECT value FROM json_each(${JSON.stringify(batch.startedIds)}))
    AND started_at IS NULL`.execute(trx);
}
