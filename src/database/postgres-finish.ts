import { type RawBuilder, sql } from "kysely";
import type { Db, FinishBatch } from "./dialect.js";
import { executePrepared } from "./postgres-prepared.js";

/**
 * PostgreSQL's record of successful attempts in one statement (one round trip, one commit): the
 * claims this process still holds among `jobIds` are deleted (the stale-worker guard: only what
 * `removed` returns is touched), and those jobs are marked finished, or deleted when finished jobs
 * are not kept; `marked` marks the claims of `startedIds` started (jobs that left the worker's
 * buffer since the last batch: their marks cost no commit of their own). Returns the ids
 * recorded. For jobs without a concurrency key only: a slot to give back needs the portable
 * transaction (see `finishClaimedJobs`).
 *
 * A job that has dependents needs the portable transaction too (it releases them). The worker
 * sends those there itself, knowing from the claim; a dependent added while the job ran is caught
 * here: the UPDATE (or DELETE) of a job row another transaction changed since this statement
 * began re-reads the row as committed, and `0 / (1 - has_dependents)` then divides by zero, which
 * undoes the whole statement. Nothing is recorded (nor marked) and every job goes to the portable
 * path, with the marks. For a
 * job without dependents the guard is one integer expression.
 */
export async function finishInOneStatement(db: Db, batch: FinishBatch): Promise<number[]> {
  // The ids as one array literal: whole numbers need no quoting, where an array parameter would
  // have the driver convert and escape them one by one.
  const ids = `{${batch.jobIds.join(",")}}`;
  const outcome = batch.preserve
    ? sql`UPDATE firm_queue_jobs j SET finished_at = ${batch.now}, updated_at = ${batch.now}, attempts = j.attempts + 1
          FROM removed WHERE j.id = removed.job_id AND 0 / (1 - j.has_dependents) = 0`
    : sql`DELETE FROM firm_queue_jobs j USING removed WHERE j.id = removed.job_id AND 0 / (1 - j.has_dependents) = 0`;
  return recordedIds(
    db,
    sql<RecordedRow>`
    WITH removed AS (
      DELETE FROM firm_queue_claimed_executions
      WHERE process_id = ${batch.processId} AND job_id = ANY(${ids}::bigint[])
      RETURNING job_id
    ), recorded AS (${outcome}), ${startedMarks(batch)}
    SELECT job_id FROM removed`,
  );
}

/** A claim a finish statement removed: its job's id. */
export interface RecordedRow {
  readonly job_id: number | string;
}

/**
 * The `marked` step of a finish statement: the claims of `startedIds` (jobs that left the
 * worker's buffer since the last batch) marked started, in the statement's one commit.
 */
export function startedMarks(batch: FinishBatch): RawBuilder<unknown> {
  const started = `{${batch.startedIds.join(",")}}`;
  return sql`marked AS (
      UPDATE firm_queue_claimed_executions SET started_at = ${batch.now}
      WHERE process_id = ${batch.processId} AND job_id = ANY(${started}::bigint[]) AND started_at IS NULL
    )`;
}

/**
 * Run a finish statement (prepared) and return the ids of the claims it removed. Its guard gives
 * up by dividing by zero (SQLSTATE `division_by_zero`), which undoes the whole statement: then
 * nothing was recorded, and none is returned.
 */
export async function recordedIds(db: Db, statement: RawBuilder<RecordedRow>): Promise<number[]> {
  const rows = await executePrepared(db, statement).then(
    (result) => result.rows,
    (error: unknown) => {
      if (isGuardTripped(error)) return [];
      throw error;
    },
  );
  return rows.map((row) => Number(row.job_id));
}

function isGuardTripped(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "22012";
}
