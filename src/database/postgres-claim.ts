import { type RawBuilder, sql } from "kysely";
import { type ClaimedJob, CLAIMED_JOB_COLUMNS } from "./claimed-job.js";
import type { Db, ReadyClaim, ReadyClaimResult } from "./dialect.js";
import { executePrepared } from "./postgres-prepared.js";

type ClaimRow = ClaimedJob & { readonly picked_count: number | string; readonly alive: number | string };

/**
 * PostgreSQL's claim in one statement (one round trip, one commit, in autocommit):
 * - `picked` locks up to `limit` ready rows of unpaused queues in (priority, job id) order,
 *   passing over rows other claimers hold (`FOR UPDATE SKIP LOCKED`);
 * - `self` share-locks the claiming process's row, only when something was picked, so the pruner
 *   cannot fail these claims as orphans before they are committed (an empty poll locks nothing);
 * - `gone` deletes the picked ready rows, and only if `self` found the row; `claimed` records the
 *   claims from what `gone` returned, the first `startNow` of them in claim order (priority, job
 *   id) already marked started: those go straight to free slots, and come back with
 *   `claim_started` true.
 * The outer SELECT always yields a row, so the caller learns "rows were there but the process row
 * is gone" (picked_count > 0, alive = 0) as well as which jobs it claimed, with the columns of
 * `CLAIMED_JOB_COLUMNS` only.
 *
 * The picked rows reach the DELETE, and the claims the jobs table, as arrays (`= ANY(ARRAY(…))`)
 * rather than as joins: the planner cannot tell how few rows a CTE holds, and with a join it
 * chose hash joins that read every ready row and every job on each claim, so a claim's cost grew
 * with the backlog and with the finished jobs kept. The arrays leave it one plan: row addresses
 * for the DELETE (the picked rows are locked by this statement, so their `ctid` cannot change
 * under it) and primary-key lookups for the jobs.
 */
export async function claimReadyInOneStatement(db: Db, claim: ReadyClaim): Promise<ReadyClaimResult> {
  const queue = claim.queue === undefined ? sql`` : sql`AND r.queue_name = ${claim.queue}`;
  const exclude = claim.exclude.length === 0 ? sql`` : sql`AND r.queue_name <> ALL(${[...claim.exclude]}::text[])`;
  const { rows } = await executePrepared(
    db,
    sql<ClaimRow>`
    WITH picked AS (
      SELECT r.ctid AS row_id FROM firm_queue_ready_executions r
      WHERE r.queue_name NOT IN (SELECT queue_name FROM firm_queue_pauses) ${queue} ${exclude}
      ORDER BY r.priority, r.job_id
      LIMIT ${claim.limit}
      FOR UPDATE SKIP LOCKED
    ), self AS (
      SELECT id FROM firm_queue_processes
      WHERE id = ${claim.processId} AND EXISTS (SELECT 1 FROM picked)
      FOR SHARE
    ), gone AS (
      DELETE FROM firm_queue_ready_executions
      WHERE ctid = ANY(ARRAY(SELECT row_id FROM picked)) AND EXISTS (SELECT 1 FROM self)
      RETURNING job_id, priority
    ), claimed AS (
      INSERT INTO firm_queue_claimed_executions (job_id, process_id, created_at, started_at)
      SELECT job_id, ${claim.processId}, ${claim.now},
        CASE WHEN row_number() OVER (ORDER BY priority, job_id) <= ${claim.startNow} THEN ${claim.now}::timestamptz END
      FROM gone
      RETURNING job_id, started_at
    )
    SELECT s.picked_count, s.alive, ${CLAIMED_COLUMNS},
      j.id = ANY(ARRAY(SELECT job_id FROM claimed WHERE started_at IS NOT NULL)) AS claim_started
    FROM (SELECT (SELECT count(*) FROM picked) AS picked_count, (SELECT count(*) FROM self) AS alive) s
    LEFT JOIN firm_queue_jobs j ON j.id = ANY(ARRAY(SELECT job_id FROM claimed))
    ORDER BY j.priority, j.id`,
  );
  const first = rows[0];
  if (first === undefined || Number(first.picked_count) === 0) return { jobs: [], processGone: false };
  if (Number(first.alive) === 0) return { jobs: [], processGone: true };
  // The rows go out as they came: copying each one without the two counts would cost an object
  // per job, and nobody reads the counts on a job.
  const jobs: ClaimedJob[] = [];
  for (const row of rows) if (row.id !== null) jobs.push(row);
  return { jobs, processGone: false };
}

/** The claimed-job columns of `j`, its timestamps as text (see `iso`). */
const CLAIMED_COLUMNS = sql.join(
  CLAIMED_JOB_COLUMNS.map((column) =>
    column === "scheduled_at" || column === "created_at"
      ? sql`${iso(sql.ref(`j.${column}`))} AS ${sql.ref(column)}`
      : sql.ref(`j.${column}`),
  ),
);

/**
 * A timestamp column as ISO-8601 UTC text with milliseconds, the form SQLite stores and `toDate`
 * reads: the driver then hands back a string instead of parsing a `Date` for every timestamp of
 * every claimed job, which the worker mostly never looks at (bench/results/history.md, "Hot path, third
 * pass"). A `Date` keeps milliseconds only, so nothing is lost.
 */
function iso(column: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
