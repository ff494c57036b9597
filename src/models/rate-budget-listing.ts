import { sql } from "kysely";
import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";

/** One rate-limit budget as `firm.inspect.rateLimits()` shows it. */
export interface RateBudgetUsage {
  /** `job:<group>`, `job:<group>/<key>` or `queue:<name>` (docs/rate-limits.md). */
  readonly budget: string;
  /** The queue of a queue's limit; null for a job's. */
  readonly queue: string | null;
  readonly limit: number;
  readonly periodMs: number;
  /** Starts counted in the window ending now. */
  readonly used: number;
  /** Jobs waiting for it: a job budget's throttled jobs, a queue budget's ready jobs. */
  readonly waiting: number;
  /** Until when a RateLimitedError closed it; null when it is not closed. */
  readonly closedUntil: Date | null;
  /** When it has room again, if it is full or closed now; null: it has room now. */
  readonly reopensAt: Date | null;
}

/**
 * Up to `limit` budgets in key order, with their use of the current window (on the database
 * clock `now`), the jobs waiting for them and when they reopen. Reads the budgets, their start
 * rows (at most about one period of claims each) and two grouped counts.
 */
export async function listRateBudgets(db: Db, now: Date, limit: number): Promise<RateBudgetUsage[]> {
  const budgets = await db
    .selectFrom("firm_queue_rate_budgets")
    .select(["key", "queue_name", "limit_count", "period_ms", "closed_until"])
    .orderBy("key")
    .limit(limit)
    .execute();
  if (budgets.length === 0) return [];
  const keys = budgets.map((row) => row.key);
  const queues = budgets.flatMap((row) => (row.queue_name === null ? [] : [row.queue_name]));
  const [starts, throttled, ready] = await Promise.all([
    db
      .selectFrom("firm_queue_rate_starts")
      .select(["budget_key", "started_at", "count"])
      .where("budget_key", "in", keys)
      .execute(),
    db
      .selectFrom("firm_queue_throttled_executions")
      .select(["budget_key", sql<number | string>`COUNT(*)`.as("count")])
      .where("budget_key", "in", keys)
      .groupBy("budget_key")
      .execute(),
    queues.length === 0
      ? Promise.resolve([])
      : db
          .selectFrom("firm_queue_ready_executions")
          .select(["queue_name", sql<number | string>`COUNT(*)`.as("count")])
          .where("queue_name", "in", queues)
          .groupBy("queue_name")
          .execute(),
  ]);
  const waitingByKey = new Map(throttled.map((row) => [row.budget_key, Number(row.count)]));
  const readyByQueue = new Map(ready.map((row) => [row.queue_name, Number(row.count)]));
  return budgets.map((row) => {
    const periodMs = Number(row.period_ms);
    const limitCount = Number(row.limit_count);
    const windowStart = now.getTime() - periodMs;
    const inWindow = starts
      .filter((start) => start.budget_key === row.key)
      .map((start) => ({ at: toDate(start.started_at).getTime(), count: Number(start.count) }))
      .filter((start) => start.at > windowStart)
      .sort((a, b) => a.at - b.at);
    const used = inWindow.reduce((sum, start) => sum + start.count, 0);
    const closedUntil = toDate(row.closed_until);
    const closed = closedUntil !== null && closedUntil > now ? closedUntil : null;
    // Full: room comes back when enough of the oldest starts have left the window.
    let fullUntil: Date | null = null;
    if (used >= limitCount) {
      let left = used;
      for (const start of inWindow) {
        left -= start.count;
        if (left < limitCount) {
          fullUntil = new Date(start.at + periodMs);
          break;
        }
      }
    }
    const reopensAt = closed !== null && (fullUntil === null || closed > fullUntil) ? closed : fullUntil;
    return {
      budget: row.key,
      queue: row.queue_name,
      limit: limitCount,
      periodMs,
      used,
      waiting: row.queue_name === null ? (waitingByKey.get(row.key) ?? 0) : (readyByQueue.get(row.queue_name) ?? 0),
      closedUntil: closed,
      reopensAt,
    };
  });
}
