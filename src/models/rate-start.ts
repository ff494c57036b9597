import { sql } from "kysely";
import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";

/**
 * Start-log rows of one budget that have left every window, kept until this many gather: the
 * claim that finds them deletes them together, so most claims read the window in one statement
 * and the log holds at most one period of claims and these few.
 */
export const STALE_STARTS_KEPT = 32;

/** A budget's use of its current window: starts counted, and when the oldest of them was. */
export interface WindowUse {
  readonly used: number;
  /** The oldest start still in the window; null when the window is empty. */
  readonly oldest: Date | null;
}

/**
 * The starts of `budgetKey` after `windowStart` (the window is `(windowStart, now]`), read with the
 * count of its rows that no window ending now or later can contain; those are deleted once
 * {@link STALE_STARTS_KEPT} of them have gathered.
 */
export async function windowUse(trx: Db, budgetKey: string, windowStart: Date): Promise<WindowUse> {
  const row = await trx
    .selectFrom("firm_queue_rate_starts")
    .select([
      sql<number | string | null>`SUM(CASE WHEN started_at > ${windowStart} THEN count ELSE 0 END)`.as("used"),
      sql<Date | string | null>`MIN(CASE WHEN started_at > ${windowStart} THEN started_at END)`.as("oldest"),
      sql<number | string | null>`SUM(CASE WHEN started_at > ${windowStart} THEN 0 ELSE 1 END)`.as("stale"),
    ])
    .where("budget_key", "=", budgetKey)
    .executeTakeFirst();
  if (Number(row?.stale ?? 0) >= STALE_STARTS_KEPT) await pruneStarts(trx, budgetKey, windowStart);
  return { used: Number(row?.used ?? 0), oldest: toDate(row?.oldest ?? null) };
}

/** Forget the starts of `budgetKey` that no window ending now or later can contain. */
async function pruneStarts(trx: Db, budgetKey: string, windowStart: Date): Promise<void> {
  await trx
    .deleteFrom("firm_queue_rate_starts")
    .where("budget_key", "=", budgetKey)
    .where("started_at", "<=", windowStart)
    .execute();
}

/** Record that one claim started `count` jobs of `budgetKey` at `now`. */
export async function recordStarts(trx: Db, budgetKey: string, count: number, now: Date): Promise<void> {
  await trx.insertInto("firm_queue_rate_starts").values({ budget_key: budgetKey, started_at: now, count }).execute();
}
