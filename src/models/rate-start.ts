import { sql } from "kysely";
import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";

/** A budget's use of its current window: starts counted, and when the oldest of them was. */
export interface WindowUse {
  readonly used: number;
  /** The oldest start still in the window; null when the window is empty. */
  readonly oldest: Date | null;
}

/** Forget the starts of `budgetKey` that no window ending now or later can contain. */
export async function pruneStarts(trx: Db, budgetKey: string, windowStart: Date): Promise<void> {
  await trx
    .deleteFrom("firm_queue_rate_starts")
    .where("budget_key", "=", budgetKey)
    .where("started_at", "<=", windowStart)
    .execute();
}

/** The starts of `budgetKey` after `windowStart` (the window is `(windowStart, now]`). */
export async function windowUse(trx: Db, budgetKey: string, windowStart: Date): Promise<WindowUse> {
  const row = await trx
    .selectFrom("firm_queue_rate_starts")
    .select([
      sql<number | string | null>`SUM(count)`.as("used"),
      sql<Date | string | null>`MIN(started_at)`.as("oldest"),
    ])
    .where("budget_key", "=", budgetKey)
    .where("started_at", ">", windowStart)
    .executeTakeFirst();
  return { used: Number(row?.used ?? 0), oldest: toDate(row?.oldest ?? null) };
}

/** Record that one claim started `count` jobs of `budgetKey` at `now`. */
export async function recordStarts(trx: Db, budgetKey: string, count: number, now: Date): Promise<void> {
  await trx.insertInto("firm_queue_rate_starts").values({ budget_key: budgetKey, started_at: now, count }).execute();
}
