import { sql } from "kysely";
import type { Db, ReadyEnqueue } from "./dialect.js";
import { executePrepared } from "./postgres-prepared.js";

/**
 * Separates the jobs' arguments in one text parameter. JSON text as `JSON.stringify` writes it
 * never holds a raw control character (they are escaped as `\u001e`), so this one cannot occur
 * inside an argument.
 */
export const SEPARATOR = "\u001e";

/**
 * PostgreSQL's enqueue of jobs that are due now and have no concurrency key, in one statement
 * whatever their number: the jobs are inserted, and their ready rows are inserted from what that
 * INSERT returned. Returns the new ids in input order (one statement's identity values ascend in
 * row order, as `insertJobs` relies on).
 *
 * Built to be cheap on both sides for a batch of a thousand: the arguments travel as one text,
 * joined by a separator they cannot contain and split by `string_to_array` (where a `text[]`
 * parameter would be escaped element by element by the driver and parsed again by the server);
 * a queue, job name, priority or trace context shared by every job (the usual `enqueueAll`)
 * travels once, and only one that varies travels as a JSON array, one element per job. The ids
 * come back as one array rather than one row each.
 */
export async function enqueueReadyInOneStatement(db: Db, batch: ReadyEnqueue): Promise<number[]> {
  const { jobs, now } = batch;
  if (jobs.length === 0) return [];
  let args = jobs[0]!.arguments;
  for (let index = 1; index < jobs.length; index++) args += SEPARATOR + jobs[index]!.arguments;
  const queue = column(jobs, (job) => job.queueName, jsonText);
  const name = column(jobs, (job) => job.className, jsonText);
  const priority = column(jobs, (job) => job.priority, JSON.stringify);
  const trace = column(jobs, (job) => job.traceContext ?? null, jsonText);
  const { rows } = await executePrepared(
    db,
    sql<{ ids: string | null }>`
    WITH inserted AS (
      INSERT INTO firm_queue_jobs (queue_name, class_name, arguments, priority, scheduled_at, trace_context, created_at, updated_at)
      SELECT t.q, t.c, t.a, t.p, ${now}::timestamptz, t.tc, ${now}::timestamptz, ${now}::timestamptz
      FROM (${rowsOf(args, queue, name, priority, trace)}) AS t
      ORDER BY t.n
      RETURNING id, queue_name, priority
    ), ready AS (
      INSERT INTO firm_queue_ready_executions (job_id, queue_name, priority, created_at)
      SELECT id, queue_name, priority, ${now}::timestamptz FROM inserted
    )
    SELECT array_agg(id ORDER BY id)::text AS ids FROM inserted`,
  );
  return parseIdArray(rows[0]?.ids ?? null);
}

type Column<T> = [T | null, string];

/**
 * The batch's rows `(a, q, c, p, tc, n)`, `n` their place in the batch: the arguments split
 * apart, and each other column's one value, or (ROWS FROM padding the shorter lists with NULLs)
 * its list where it has one.
 */
function rowsOf(
  args: string,
  queue: Column<string>,
  name: Column<string>,
  priority: Column<number>,
  trace: Column<string | null>,
) {
  const split = sql`unnest(string_to_array(${args}::text, ${SEPARATOR}::text))`;
  if ([queue, name, priority, trace].every(([, list]) => list === "[]")) {
    // The usual batch, and every single job: one list, nothing else to zip.
    return sql`SELECT t.a, ${queue[0]}::text AS q, ${name[0]}::text AS c, ${priority[0]}::int AS p,
      ${trace[0]}::text AS tc, t.n FROM ${split} WITH ORDINALITY AS t(a, n)`;
  }
  return sql`SELECT t.a, COALESCE(t.q, ${queue[0]}::text) AS q, COALESCE(t.c, ${name[0]}::text) AS c,
      COALESCE(t.p::int, ${priority[0]}::int) AS p, COALESCE(t.tc, ${trace[0]}::text) AS tc, t.n
    FROM ROWS FROM (
      ${split},
      json_array_elements_text(${queue[1]}::json),
      json_array_elements_text(${name[1]}::json),
      json_array_elements_text(${priority[1]}::json),
      json_array_elements_text(${trace[1]}::json)
    ) WITH ORDINALITY AS t(a, q, c, p, tc, n)`;
}

/**
 * One column of the batch: `[value, "[]"]` when every job has the same value, else
 * `[null, list]` with every job's value in a JSON array.
 */
function column<T>(
  jobs: ReadyEnqueue["jobs"],
  read: (job: ReadyEnqueue["jobs"][number]) => T,
  list: (values: T[]) => string,
): Column<T> {
  const value = read(jobs[0]!);
  for (let index = 1; index < jobs.length; index++) {
    if (read(jobs[index]!) !== value) return [null, list(jobs.map(read))];
  }
  return [value, "[]"];
}

/** A lone UTF-16 surrogate: half of a pair, with the other half missing. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `value` as JSON text for the server's JSON functions. PostgreSQL refuses to unescape a lone
 * surrogate (which `JSON.stringify` writes as `\udXXX`), where a text parameter has it replaced
 * by U+FFFD on its way to UTF-8: such strings are given that replacement here, so these statements
 * store what every other statement would.
 */
export function jsonText(value: unknown): string {
  const json = JSON.stringify(value);
  if (!json.includes("\\u")) return json;
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === "string" ? item.replace(LONE_SURROGATE, "\ufffd") : item,
  );
}

/** The ids of PostgreSQL's `bigint[]` text form, `{1,2,3}` (null: no rows). */
export function parseIdArray(text: string | null): number[] {
  if (text === null || text === "{}") return [];
  return text.slice(1, -1).split(",").map(Number);
}
