import { sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { executePrepared } from "./postgres-prepared.js";

/**
 * PostgreSQL's record of successful attempts in one statement (one round trip, one commit): the
 * claims this process still holds among `jobIds` are deleted (the stale-worker guard: only what
 * `removed` returns is touched), and those jobs are marked finished, or deleted when finished jobs
 * are not kept. Returns the ids recorded. For jobs without a concurrency key only: a slot to give
 * back needs the portable transaction (see `finishClaimedJobs`).
 */
export async function finishInOneStatement(db: Db, batch: FinishBatch): Promise<number[]> {
  // The ids as one array literal: whole numbers need no quoting, where an array parameter would
  // have the driver convert and escape them one by one.
  const ids = `{${batch.jobIds.join(",")}}`;
  const outcome = batch.preserve
    ? sql`UPDATE firm_queue_jobs j SET finished_at = ${batch.now}, updated_at = ${batch.now}, attempts = j.attempts + 1
          FROM removed WHERE j.id = removed.job_id`
    : sql`DELETE FROM firm_queue_jobs j USING removed WHERE j.id = removed.job_id`;
  const { rows } = await executePrepared(
    db,
    sql<{ job_id: number | string }>`
    WITH removed AS (
      DELETE FROM firm_queue_claimed_executions
      WHERE process_id = ${batch.processId} AND job_id = ANY(${ids}::bigint[])
      RETURNING job_id
    ), recorded AS (${outcome})
    SELECT job_id FROM removed`,
  );
  return rows.map((row) => Number(row.job_id));
}
