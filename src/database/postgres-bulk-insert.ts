import { sql } from "kysely";
import type { EdgeInsert, NewJob, ReadyJob } from "./insert-rows.js";
import type { BulkInsert, Db } from "./dialect.js";
import { executePrepared } from "./postgres-prepared.js";
import { jsonText, parseIdArray, SEPARATOR } from "./postgres-enqueue.js";

/**
 * PostgreSQL's row writes of a large enqueue (a flow's jobs and edges, a batch's jobs and
 * memberships, their ready rows): one statement per table whatever the number of rows, where the
 * portable code sends one multi-row INSERT per 1,000 rows with a dozen bound parameters each.
 * As in {@link enqueueReadyInOneStatement}, the jobs' arguments travel as one text split on the
 * server, the other columns as one JSON array of rows, and the new ids come back as one array.
 * The portable code still decides every value written (dispatch, counts, marks): only the
 * statements change.
 */
export const postgresBulkInsert: BulkInsert = {
  async jobs(db: Db, jobs: readonly NewJob[], now: Date): Promise<number[]> {
    let args = jobs[0]!.arguments;
    for (let index = 1; index < jobs.length; index++) args += SEPARATOR + jobs[index]!.arguments;
    const due = now.getTime();
    const rows = jsonText(
      jobs.map((job) => [
        job.queueName,
        job.className,
        job.priority,
        // null: due now (the usual case, sent once as `now`).
        job.scheduledAt.getTime() === due ? null : job.scheduledAt.toISOString(),
        job.concurrencyKey,
        job.jobKey ?? null,
        job.traceContext ?? null,
        job.unmetDependencies ?? 0,
        job.hasDependents ? 1 : 0,
        job.rateLimitKey || null,
        job.batchId || null,
      ]),
    );
    const { rows: result } = await executePrepared(
      db,
      sql<{ ids: string | null }>`
      WITH inserted AS (
        INSERT INTO firm_queue_jobs (queue_name, class_name, arguments, priority, scheduled_at, concurrency_key,
          job_key, trace_context, unmet_dependencies, has_dependents, rate_limit_key, batch_id, created_at, updated_at)
        SELECT t.r->>0, t.r->>1, t.a, (t.r->>2)::int, COALESCE((t.r->>3)::timestamptz, ${now}::timestamptz),
          t.r->>4, t.r->>5, t.r->>6, (t.r->>7)::int, (t.r->>8)::int, t.r->>9, (t.r->>10)::bigint,
          ${now}::timestamptz, ${now}::timestamptz
        FROM ROWS FROM (
          unnest(string_to_array(${args}::text, ${SEPARATOR}::text)),
          json_array_elements(${rows}::json)
        ) WITH ORDINALITY AS t(a, r, n)
        ORDER BY t.n
        RETURNING id
      )
      SELECT array_agg(id ORDER BY id)::text AS ids FROM inserted`,
    );
    return parseIdArray(result[0]?.ids ?? null);
  },

  async dependencies(db: Db, edges: readonly EdgeInsert[], now: Date): Promise<void> {
    const rows = jsonText(
      edges.map((edge) => [
        edge.jobId,
        edge.dependencyId,
        edge.position,
        edge.onFailure,
        edge.dependencyName,
        edge.state,
        edge.result,
      ]),
    );
    await executePrepared(
      db,
      sql`
      INSERT INTO firm_queue_job_dependencies (job_id, dependency_id, position, on_failure, dependency_name,
        dependency_state, result, created_at)
      SELECT (r->>0)::bigint, (r->>1)::bigint, (r->>2)::int, r->>3, r->>4, r->>5, r->>6, ${now}::timestamptz
      FROM json_array_elements(${rows}::json) AS r`,
    );
  },

  async ready(db: Db, jobs: readonly ReadyJob[], now: Date): Promise<void> {
    const rows = jsonText(jobs.map((job) => [job.id, job.queueName, job.priority]));
    await executePrepared(
      db,
      sql`
      INSERT INTO firm_queue_ready_executions (job_id, queue_name, priority, created_at)
      SELECT (r->>0)::bigint, r->>1, (r->>2)::int, ${now}::timestamptz
      FROM json_array_elements(${rows}::json) AS r`,
    );
  },

  async batchJobs(db: Db, batchId: number, jobIds: readonly number[], now: Date): Promise<void> {
    await executePrepared(
      db,
      sql`
      INSERT INTO firm_queue_batch_jobs (batch_id, job_id, created_at)
      SELECT ${batchId}::bigint, id, ${now}::timestamptz FROM unnest(${`{${jobIds.join(",")}}`}::bigint[]) AS id`,
    );
  },
};
