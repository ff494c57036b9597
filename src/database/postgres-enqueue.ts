import { sql } from "kysely";
import type { Db, ReadyEnqueue } from "./dialect.js";

/**
 * PostgreSQL's enqueue of jobs that are due now and have no concurrency key, in one statement
 * whatever their number: the jobs are inserted, and their ready rows are inserted from what that
 * INSERT returned. Returns the new ids in input order (one statement's identity values ascend in
 * row order, as `insertJobs` relies on).
 *
 * The columns travel as JSON arrays, zipped back into rows by `ROWS FROM … WITH ORDINALITY`. That
 * is cheaper on this side than `text[]` parameters, which the driver escapes element by element:
 * the arguments are JSON text already and are joined as they are, and the other columns are
 * encoded by `JSON.stringify` in one native call each. The arguments are read back as `json`,
 * whose text is the element exactly as sent; the others as text (`json_array_elements_text`
 * undoes the JSON escapes). The ids come back as one array, not one row each.
 */
export async function enqueueReadyInOneStatement(db: Db, batch: ReadyEnqueue): Promise<number[]> {
  const { jobs } = batch;
  const count = jobs.length;
  const queues = new Array<string>(count);
  const names = new Array<string>(count);
  const priorities = new Array<number>(count);
  const traces = new Array<string | null>(count);
  let args = "[";
  for (let index = 0; index < count; index++) {
    const job = jobs[index]!;
    queues[index] = job.queueName;
    names[index] = job.className;
    priorities[index] = job.priority;
    traces[index] = job.traceContext ?? null;
    args += index === 0 ? job.arguments : `,${job.arguments}`;
  }
  args += "]";
  const { rows } = await sql<{ ids: string | null }>`
    WITH inserted AS (
      INSERT INTO firm_queue_jobs (queue_name, class_name, arguments, priority, scheduled_at, trace_context, created_at, updated_at)
      SELECT t.q, t.c, t.a::text, t.p::int, ${batch.now}::timestamptz, t.tc, ${batch.now}::timestamptz, ${batch.now}::timestamptz
      FROM ROWS FROM (
        json_array_elements_text(${textArray(queues)}::json),
        json_array_elements_text(${textArray(names)}::json),
        json_array_elements(${args}::json),
        json_array_elements_text(${JSON.stringify(priorities)}::json),
        json_array_elements_text(${textArray(traces)}::json)
      ) WITH ORDINALITY AS t(q, c, a, p, tc, n)
      ORDER BY t.n
      RETURNING id, queue_name, priority
    ), ready AS (
      INSERT INTO firm_queue_ready_executions (job_id, queue_name, priority, created_at)
      SELECT id, queue_name, priority, ${batch.now}::timestamptz FROM inserted
    )
    SELECT array_agg(id ORDER BY id)::text AS ids FROM inserted`.execute(db);
  return parseIdArray(rows[0]?.ids ?? null);
}

/** A lone UTF-16 surrogate: half of a pair, with the other half missing. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Strings as a JSON array for `json_array_elements_text`. PostgreSQL refuses to unescape a lone
 * surrogate (which `JSON.stringify` writes as `\udXXX`), where a text parameter has it replaced
 * by U+FFFD on its way to UTF-8: such strings are given that replacement here, so this statement
 * stores what every other statement would.
 */
function textArray(values: readonly (string | null)[]): string {
  const json = JSON.stringify(values);
  if (!json.includes("\\u")) return json;
  return JSON.stringify(values.map((value) => (value === null ? null : value.replace(LONE_SURROGATE, "\ufffd"))));
}

/** The ids of PostgreSQL's `bigint[]` text form, `{1,2,3}` (null: no rows). */
function parseIdArray(text: string | null): number[] {
  if (text === null || text === "{}") return [];
  return text.slice(1, -1).split(",").map(Number);
}
