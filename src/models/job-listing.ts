import { sql, type Expression, type ExpressionBuilder, type Selectable, type SqlBool } from "kysely";
import type { Db } from "../database/dialect.js";
import { toDate, type JobsTable, type Schema } from "../database/schema.js";
import { parseStoredError, type StoredError } from "./failed-execution.js";
import { encodeCursor, type JobCursor } from "./job-cursor.js";
import { jobBasics, type JobBasics, type JobState } from "./job-info.js";

/** One job in a listing: the job row, its state, and when it entered that state. */
export interface JobSummary extends JobBasics {
  readonly state: JobState;
  /**
   * When the job entered its state: became ready, blocked, claimed or failed; for `scheduled`
   * the time it is due; for `finished` its finish time. Listings sort and filter on it.
   */
  readonly since: Date;
  readonly scheduledAt: Date | null;
  readonly finishedAt: Date | null;
  readonly concurrencyKey: string | null;
  /** State `failed`: the error that failed the job. */
  readonly error?: StoredError;
  /** State `claimed`: the row id of the process running it (null when its process is gone). */
  readonly processId?: number | null;
}

/** What a listing selects: the state, and filters that all must match. */
export interface JobListingQuery {
  readonly state: JobState;
  readonly queue?: string;
  readonly name?: string;
  /** Only jobs enqueued with this unique key (see docs/jobs.md). */
  readonly key?: string;
  /** Only jobs whose `since` is at or after this time. */
  readonly from?: Date;
  /** Only jobs whose `since` is before this time. */
  readonly to?: Date;
}

/** One page of a listing and the cursor of the next (null on the last page). */
export interface JobPage {
  readonly jobs: JobSummary[];
  readonly nextCursor: string | null;
}

/** The states a job is in by having a row in an execution table. */
export type ExecutionState = Exclude<JobState, "finished" | "cancelled" | "pending">;

/** The execution table of each state, and its column that says since when. */
export const EXECUTIONS: Record<ExecutionState, { table: string; time: string; hasQueue: boolean }> = {
  ready: { table: "firm_queue_ready_executions", time: "created_at", hasQueue: true },
  scheduled: { table: "firm_queue_scheduled_executions", time: "scheduled_at", hasQueue: true },
  blocked: { table: "firm_queue_blocked_executions", time: "created_at", hasQueue: true },
  throttled: { table: "firm_queue_throttled_executions", time: "created_at", hasQueue: true },
  claimed: { table: "firm_queue_claimed_executions", time: "created_at", hasQueue: false },
  failed: { table: "firm_queue_failed_executions", time: "created_at", hasQueue: false },
};

/** A job row with its state's time and, when the state has them, its error and process. */
export type ListedRow = Selectable<JobsTable> & {
  since: Date | string;
  failure: string | null;
  process_id: number | null;
};

/**
 * A page of jobs in one state, newest first, `limit` at most, after `cursor`. Keyset
 * pagination: every page is one index range read, however deep, never an OFFSET scan.
 * Execution states page on the execution's unique `job_id` index (descending job id);
 * finished jobs on `finished_at` (newest finish first, ties by id), which the
 * `(finished_at)` (ended jobs only) and `(queue_name, finished_at)` indexes serve.
 */
export async function listJobsPage(
  db: Db,
  query: JobListingQuery,
  limit: number,
  cursor: JobCursor | null,
): Promise<JobPage> {
  const ended = query.state === "finished" || query.state === "cancelled";
  const rows =
    query.state === "finished" || query.state === "cancelled"
      ? await finishedRows(db, query, limit + 1, cursor)
      : query.state === "pending"
        ? await pendingRows(db, query, limit + 1, cursor)
        : await executionRows(db, query.state, query, limit + 1, cursor);
  const more = rows.length > limit;
  const jobs = rows.slice(0, limit).map((row) => toSummary(row, query.state));
  const last = jobs.at(-1);
  const nextCursor = more && last ? encodeCursor(ended ? { id: last.id, at: last.since } : { id: last.id }) : null;
  return { jobs, nextCursor };
}

async function executionRows(
  db: Db,
  state: ExecutionState,
  query: JobListingQuery,
  limit: number,
  cursor: JobCursor | null,
): Promise<ListedRow[]> {
  const spec = EXECUTIONS[state];
  const since = sql.ref(`e.${spec.time}`);
  let builder = db
    .selectFrom(`${spec.table} as e` as "firm_queue_ready_executions as e")
    .innerJoin("firm_queue_jobs as j", "j.id", "e.job_id")
    .selectAll("j")
    .select([
      sql<Date | string>`${since}`.as("since"),
      (state === "failed" ? sql<string | null>`e.error` : sql<string | null>`NULL`).as("failure"),
      (state === "claimed" ? sql<number | null>`e.process_id` : sql<number | null>`NULL`).as("process_id"),
    ]);
  if (query.queue !== undefined)
    builder = builder.where(spec.hasQueue ? "e.queue_name" : "j.queue_name", "=", query.queue);
  if (query.name !== undefined) builder = builder.where("j.class_name", "=", query.name);
  if (query.key !== undefined) builder = builder.where("e.job_id", "in", jobsWithKey(db, query.key));
  if (query.from !== undefined) builder = builder.where(since, ">=", query.from);
  if (query.to !== undefined) builder = builder.where(since, "<", query.to);
  if (cursor) builder = builder.where("e.job_id", "<", cursor.id);
  return (await builder.orderBy("e.job_id", "desc").limit(limit).execute()) as ListedRow[];
}

/**
 * Whether a job of the jobs table (as `j`) is a finished one, or a cancelled one for state
 * `cancelled`, that matches the query's filters; `since` is its finish time. The listing and the
 * bounded count use the same conditions, so they agree. `finished_at IS NOT NULL` is what lets
 * SQLite and PostgreSQL read the `(finished_at)` index, which holds ended jobs only (migration 018).
 */
export function finishedJobMatches(
  eb: ExpressionBuilder<Schema & { j: JobsTable }, "j">,
  query: JobListingQuery,
): Expression<SqlBool> {
  const conditions = [
    eb("j.finished_at", "is not", null),
    eb("j.cancelled_at", query.state === "cancelled" ? "is not" : "is", null),
  ];
  if (query.queue !== undefined) conditions.push(eb("j.queue_name", "=", query.queue));
  if (query.name !== undefined) conditions.push(eb("j.class_name", "=", query.name));
  if (query.key !== undefined) conditions.push(eb("j.job_key", "=", query.key));
  if (query.from !== undefined) conditions.push(eb("j.finished_at", ">=", query.from));
  if (query.to !== undefined) conditions.push(eb("j.finished_at", "<", query.to));
  return eb.and(conditions);
}

/**
 * The ids of the jobs enqueued with unique key `key`, read through the `job_key` index: a key
 * matches a handful of jobs, so execution rows are filtered by that short list rather than by
 * looking up every execution row's job.
 */
export function jobsWithKey(db: Db, key: string) {
  return db.selectFrom("firm_queue_jobs as k").select("k.id").where("k.job_key", "=", key);
}

/** Rows of the jobs table alone, as listed rows whose `since` is `column` (no failure, no process). */
function jobRowsSince(db: Db, column: "finished_at" | "created_at") {
  return db
    .selectFrom("firm_queue_jobs as j")
    .selectAll("j")
    .select([
      sql<Date | string>`${sql.ref(`j.${column}`)}`.as("since"),
      sql<string | null>`NULL`.as("failure"),
      sql<number | null>`NULL`.as("process_id"),
    ]);
}

async function finishedRows(
  db: Db,
  query: JobListingQuery,
  limit: number,
  cursor: JobCursor | null,
): Promise<ListedRow[]> {
  let builder = jobRowsSince(db, "finished_at").where((eb) => finishedJobMatches(eb, query));
  if (cursor) {
    const at = cursor.at ?? new Date(8.64e15);
    // `finished_at <= at` bounds the index range: without it SQLite reads the OR as two index
    // lookups of every job finished before the cursor, sorted afterwards.
    builder = builder.where((eb) =>
      eb.and([
        eb("j.finished_at", "<=", at),
        eb.or([eb("j.finished_at", "<", at), eb.and([eb("j.finished_at", "=", at), eb("j.id", "<", cursor.id)])]),
      ]),
    );
  }
  return (await builder.orderBy("j.finished_at", "desc").orderBy("j.id", "desc").limit(limit).execute()) as ListedRow[];
}

/**
 * Jobs waiting for their dependencies, newest first: on PostgreSQL and SQLite through the partial
 * index of pending jobs (migration 012), which holds only them.
 */
async function pendingRows(
  db: Db,
  query: JobListingQuery,
  limit: number,
  cursor: JobCursor | null,
): Promise<ListedRow[]> {
  let builder = jobRowsSince(db, "created_at").where("j.unmet_dependencies", ">", 0).where("j.finished_at", "is", null);
  if (query.queue !== undefined) builder = builder.where("j.queue_name", "=", query.queue);
  if (query.name !== undefined) builder = builder.where("j.class_name", "=", query.name);
  if (query.from !== undefined) builder = builder.where("j.created_at", ">=", query.from);
  if (query.to !== undefined) builder = builder.where("j.created_at", "<", query.to);
  if (cursor) builder = builder.where("j.id", "<", cursor.id);
  return (await builder.orderBy("j.id", "desc").limit(limit).execute()) as ListedRow[];
}

/** A listed row as a {@link JobSummary} of state `state`. */
export function toSummary(row: ListedRow, state: JobState): JobSummary {
  const error =
    state === "failed"
      ? (parseStoredError(row.failure) ?? { name: "Error", message: "(no error was recorded)" })
      : undefined;
  return {
    ...jobBasics(row),
    state,
    since: toDate(row.since),
    scheduledAt: toDate(row.scheduled_at),
    finishedAt: toDate(row.finished_at),
    concurrencyKey: row.concurrency_key,
    ...(error ? { error } : {}),
    ...(state === "claimed" ? { processId: row.process_id === null ? null : Number(row.process_id) } : {}),
  };
}
