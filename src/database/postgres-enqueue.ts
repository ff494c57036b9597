import { sql } from "kysely";
import type { Db, ReadyEnqueue } from "./dialect.js";
import { executePrepared } from "./postgres-prepared.js";

/**
 * PostgreSQL's enqueue of jobs that are due now and have no concurrency key, in one statement
 * whatever their number: the rows travel as four array parameters (`unnest`), the jobs are
 * inserted, and their ready rows are inserted from what that INSERT returned. Returns the new ids
 * in input order (one statement's identity values ascend in row order, as `insertJobs` relies on).
 */
export async function enqueueReadyInOneStatement(db: Db, batch: ReadyEnqueue): Promise<number[]> {
  const queues = batch.jobs.map((job) => job.queueName);
  const names = batch.jobs.map((job) => job.className);
  const args = batch.jobs.map((job) => job.arguments);
  const priorities = batch.jobs.map((job) => job.priority);
  const traces = batch.jobs.map((job) => job.traceContext ?? null);
  const { rows } = await executePrepared(
    db,
    sql<{ id: number | string }>`
    WITH inserted AS (
      INSERT INTO firm_queue_jobs (queue_name, class_name, arguments, priority, scheduled_at, concurrency_key, trace_context, created_at, updated_at)
      SELECT t.q, t.c, t.a, t.p, ${batch.now}::timestamptz, NULL, t.tc, ${batch.now}::timestamptz, ${batch.now}::timestamptz
      FROM unnest(${queues}::text[], ${names}::text[], ${args}::text[], ${priorities}::int[], ${traces}::text[]) WITH ORDINALITY AS t(q, c, a, p, tc, n)
      ORDER BY t.n
      RETURNING id, queue_name, priority
    ), ready AS (
      INSERT INTO firm_queue_ready_executions (job_id, queue_name, priority, created_at)
      SELECT id, queue_name, priority, ${batch.now}::timestamptz FROM inserted
    )
    SELECT id FROM inserted`,
  );
  return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
}
