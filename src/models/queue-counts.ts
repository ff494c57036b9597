import { sql } from "kysely";
import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { pausedQueueNames } from "./pause.js";

/** One queue's jobs by state, as `firm.inspect.queues()` shows them. */
export interface QueueCounts {
  readonly name: string;
  readonly ready: number;
  readonly scheduled: number;
  readonly blocked: number;
  /** Waiting for a rate-limit budget of their own (docs/rate-limits.md). */
  readonly throttled: number;
  /** Claimed by a worker: running, or about to run. */
  readonly claimed: number;
  readonly failed: number;
  /** Milliseconds the oldest ready job has been waiting; 0 when none is ready. */
  readonly latency: number;
  readonly paused: boolean;
}

type Counted = { queue_name: string; count: number | string | bigint };

/**
 * Every queue that has unfinished jobs or a pause, by name, with its counts by state. Six
 * grouped counts, one per execution table: ready, scheduled, blocked and throttled rows carry their queue
 * (the ready count is served by the `(queue_name, priority, job_id)` index); claimed and failed
 * rows look their job's queue up by id. Finished jobs are not counted here (see `throughput`), so the
 * cost follows the work outstanding, not the table's history.
 */
export async function countJobsByQueue(db: Db, now: Date): Promise<QueueCounts[]> {
  const [ready, scheduled, blocked, throttled, claimed, failed, paused] = await Promise.all([
    db
      .selectFrom("firm_queue_ready_executions")
      .select(["queue_name", sql<number>`COUNT(*)`.as("count"), sql<Date | string>`MIN(created_at)`.as("oldest")])
      .groupBy("queue_name")
      .execute(),
    grouped(db, "firm_queue_scheduled_executions"),
    grouped(db, "firm_queue_blocked_executions"),
    grouped(db, "firm_queue_throttled_executions"),
    joinedCount(db, "firm_queue_claimed_executions"),
    joinedCount(db, "firm_queue_failed_executions"),
    pausedQueueNames(db),
  ]);
  const queues = new Map<string, { -readonly [K in keyof QueueCounts]: QueueCounts[K] }>();
  const entry = (name: string) => {
    let queue = queues.get(name);
    if (!queue) {
      queue = {
        name,
        ready: 0,
        scheduled: 0,
        blocked: 0,
        throttled: 0,
        claimed: 0,
        failed: 0,
        latency: 0,
        paused: false,
      };
      queues.set(name, queue);
    }
    return queue;
  };
  for (const row of ready) {
    const queue = entry(row.queue_name);
    queue.ready = Number(row.count);
    queue.latency = Math.max(0, now.getTime() - toDate(row.oldest).getTime());
  }
  for (const row of scheduled) entry(row.queue_name).scheduled = Number(row.count);
  for (const row of blocked) entry(row.queue_name).blocked = Number(row.count);
  for (const row of throttled) entry(row.queue_name).throttled = Number(row.count);
  for (const row of claimed) entry(row.queue_name).claimed = Number(row.count);
  for (const row of failed) entry(row.queue_name).failed = Number(row.count);
  for (const name of paused) entry(name).paused = true;
  return [...queues.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function grouped(
  db: Db,
  table: "firm_queue_scheduled_executions" | "firm_queue_blocked_executions" | "firm_queue_throttled_executions",
): Promise<Counted[]> {
  return db
    .selectFrom(table as "firm_queue_scheduled_executions")
    .select(["queue_name", sql<number>`COUNT(*)`.as("count")])
    .groupBy("queue_name")
    .execute();
}

/**
 * Claimed and failed rows carry no queue: each row's queue is looked up by primary key. Written
 * as a scalar subquery, not a join, because a planner facing a join of a few thousand rows with
 * a million-row jobs table may choose to scan the whole jobs table.
 */
async function joinedCount(
  db: Db,
  table: "firm_queue_claimed_executions" | "firm_queue_failed_executions",
): Promise<Counted[]> {
  const rows = await db
    .selectFrom(`${table} as e` as "firm_queue_claimed_executions as e")
    .select((eb) => [
      eb.selectFrom("firm_queue_jobs as j").select("j.queue_name").whereRef("j.id", "=", "e.job_id").as("queue_name"),
      sql<number>`COUNT(*)`.as("count"),
    ])
    .groupBy(sql.ref("queue_name"))
    .execute();
  return rows.flatMap((row) => (row.queue_name === null ? [] : [{ queue_name: row.queue_name, count: row.count }]));
}
