import { sql } from "kysely";
import type { Db } from "../database/dialect.js";
import { EXECUTIONS, finishedJobMatches, jobsWithKey, type JobListingQuery } from "./job-listing.js";

/** A count that stops at a bound: `exact` is false when there are more than `count`. */
export interface BoundedCount {
  readonly count: number;
  readonly exact: boolean;
}

/**
 * How many jobs match a listing query, counting no further than `upTo`: the matching rows are
 * read through the same indexes as the listing, with `LIMIT upTo + 1`, so the cost has a ceiling
 * however big the table. The jobs table is read only when a filter needs one of its columns.
 */
export async function countJobsUpTo(db: Db, query: JobListingQuery, upTo: number): Promise<BoundedCount> {
  const inner =
    query.state === "finished" || query.state === "cancelled"
      ? finishedRows(db, query, upTo)
      : query.state === "pending"
        ? pendingRows(db, query, upTo)
        : executionRows(db, query, upTo);
  const row = await db
    .selectFrom(inner.as("matching"))
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .executeTakeFirstOrThrow();
  const count = Number(row.count);
  return count > upTo ? { count: upTo, exact: false } : { count, exact: true };
}

/** Finished jobs matching the query, at most `upTo + 1` of them. */
function finishedRows(db: Db, query: JobListingQuery, upTo: number) {
  return db
    .selectFrom("firm_queue_jobs as j")
    .select(sql`1`.as("one"))
    .where((eb) => finishedJobMatches(eb, query))
    .limit(upTo + 1);
}

/** Pending jobs matching the query, at most `upTo + 1` of them. */
function pendingRows(db: Db, query: JobListingQuery, upTo: number) {
  let builder = db
    .selectFrom("firm_queue_jobs as j")
    .select(sql`1`.as("one"))
    .where("j.unmet_dependencies", ">", 0)
    .where("j.finished_at", "is", null);
  if (query.queue !== undefined) builder = builder.where("j.queue_name", "=", query.queue);
  if (query.name !== undefined) builder = builder.where("j.class_name", "=", query.name);
  if (query.from !== undefined) builder = builder.where("j.created_at", ">=", query.from);
  if (query.to !== undefined) builder = builder.where("j.created_at", "<", query.to);
  return builder.limit(upTo + 1);
}

/** Jobs in the query's execution table matching it, at most `upTo + 1` of them. */
function executionRows(db: Db, query: JobListingQuery, upTo: number) {
  const spec = EXECUTIONS[query.state as Exclude<JobListingQuery["state"], "finished" | "cancelled" | "pending">];
  const since = sql.ref(`e.${spec.time}`);
  let builder = db.selectFrom(`${spec.table} as e` as "firm_queue_ready_executions as e").select(sql`1`.as("one"));
  // The job's columns are read by primary key per execution row, as scalar subqueries: planners
  // turn EXISTS or a join into a hash join over every job of the queue or name, which on a big
  // table costs far more than looking up each execution row's job.
  const jobColumn = (column: "queue_name" | "class_name") =>
    db
      .selectFrom("firm_queue_jobs as j")
      .select(`j.${column}` as "j.queue_name")
      .where("j.id", "=", sql.ref<number>("e.job_id"));
  if (query.name !== undefined) builder = builder.where((eb) => eb(jobColumn("class_name"), "=", query.name!));
  if (query.queue !== undefined && !spec.hasQueue)
    builder = builder.where((eb) => eb(jobColumn("queue_name"), "=", query.queue!));
  if (query.queue !== undefined && spec.hasQueue) builder = builder.where("e.queue_name", "=", query.queue);
  if (query.key !== undefined) builder = builder.where("e.job_id", "in", jobsWithKey(db, query.key));
  if (query.from !== undefined) builder = builder.where(since, ">=", query.from);
  if (query.to !== undefined) builder = builder.where(since, "<", query.to);
  return builder.limit(upTo + 1);
}
