import { sql } from "kysely";
import type { Db } from "../database/dialect.js";

/** Jobs of one queue that were enqueued, finished and failed for good over a window. */
export interface QueueThroughput {
  readonly queue: string;
  /** Jobs enqueued in the window (at most `enqueuedUpTo` rows are read: see `enqueuedExact`). */
  readonly enqueued: number;
  /** False when more jobs were enqueued in the window than the read was allowed to look at. */
  readonly enqueuedExact: boolean;
  /** Jobs finished in the window (kept finished jobs only, as in `throughput`). */
  readonly finished: number;
  /** Jobs that failed for good in the window and are still failed. */
  readonly failed: number;
}

/**
 * Jobs enqueued, finished and failed per queue from `start` (inclusive) to `end` (exclusive),
 * read from the same sources as the overall throughput, so the cost is that of the window's rows:
 * - finished: the `(finished_at)` index's range over the window, each row's queue looked up;
 * - failed: the failed executions of the window (the table holds only jobs failed for good, and
 *   `throughput` reads them the same way), joined to their jobs by primary key;
 * - enqueued: the jobs table has no index on `created_at`, so the newest `enqueuedUpTo` ids are
 *   read as a primary-key range and those created in the window counted. Ids grow with each
 *   insert, so the window's jobs are the newest ones; if all of the range is in the window, more
 *   may be beyond it and the count is reported as not exact.
 * Queues with no activity in the window are left out; the list is sorted by queue name.
 */
export async function queueThroughput(
  db: Db,
  window: { readonly start: Date; readonly end: Date },
  enqueuedUpTo: number,
): Promise<QueueThroughput[]> {
  const { start, end } = window;
  const [finished, failed, enqueued] = await Promise.all([
    db
      .selectFrom("firm_queue_jobs")
      .select(["queue_name", sql<number>`COUNT(*)`.as("count")])
      .where("finished_at", ">=", start)
      .where("finished_at", "<", end)
      .groupBy("queue_name")
      .execute(),
    db
      .selectFrom("firm_queue_failed_executions as f")
      .innerJoin("firm_queue_jobs as j", "j.id", "f.job_id")
      .select(["j.queue_name", sql<number>`COUNT(*)`.as("count")])
      .where("f.created_at", ">=", start)
      .where("f.created_at", "<", end)
      .groupBy("j.queue_name")
      .execute(),
    enqueuedPerQueue(db, window, enqueuedUpTo),
  ]);
  const names = new Set([...finished, ...failed].map((row) => row.queue_name));
  for (const name of enqueued.counts.keys()) names.add(name);
  const countOf = (rows: readonly { queue_name: string; count: unknown }[], name: string) =>
    Number(rows.find((row) => row.queue_name === name)?.count ?? 0);
  return [...names].sort().map((queue) => ({
    queue,
    enqueued: enqueued.counts.get(queue) ?? 0,
    enqueuedExact: enqueued.exact,
    finished: countOf(finished, queue),
    failed: countOf(failed, queue),
  }));
}

/** Jobs created in the window per queue, among the newest `upTo` ids. */
async function enqueuedPerQueue(
  db: Db,
  window: { readonly start: Date; readonly end: Date },
  upTo: number,
): Promise<{ counts: Map<string, number>; exact: boolean }> {
  const newest = await db
    .selectFrom("firm_queue_jobs")
    .select(sql<number | string | bigint | null>`MAX(id)`.as("id"))
    .executeTakeFirst();
  if (newest?.id === null || newest?.id === undefined) return { counts: new Map(), exact: true };
  const lowest = Number(newest.id) - upTo;
  const rows = await db
    .selectFrom("firm_queue_jobs")
    .select([
      "queue_name",
      sql<number>`SUM(CASE WHEN created_at >= ${window.start} AND created_at < ${window.end} THEN 1 ELSE 0 END)`.as(
        "count",
      ),
      sql<number>`SUM(CASE WHEN created_at < ${window.start} THEN 1 ELSE 0 END)`.as("before"),
    ])
    .where("id", ">", lowest)
    .groupBy("queue_name")
    .execute();
  const counts = new Map<string, number>();
  for (const row of rows) if (Number(row.count) > 0) counts.set(row.queue_name, Number(row.count));
  // Exact when the range reached back past the window (a job older than it was read) or when it
  // nothing lies below it; otherwise older jobs of the window may lie below the range.
  const reachedBefore = rows.some((row) => Number(row.before) > 0);
  const exact = reachedBefore || !(await hasIdAtOrBelow(db, lowest));
  return { counts, exact };
}

/** Whether a job with an id at or below `lowest` exists (that is, the range did not start at the table's first row). */
async function hasIdAtOrBelow(db: Db, lowest: number): Promise<boolean> {
  if (lowest < 1) return false;
  const row = await db.selectFrom("firm_queue_jobs").select("id").where("id", "<=", lowest).limit(1).executeTakeFirst();
  return row !== undefined;
}
