import { sql } from "kysely";
import type { Db, Dialect } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { type QueueScope, scopeCondition } from "./throttled-execution.js";

/** A budget as the budget claim reads it. */
export interface BudgetRow {
  readonly key: string;
  readonly limit: number;
  readonly periodMs: number;
  /** Set for a queue's budget. */
  readonly queueName: string | null;
  readonly closedUntil: Date | null;
}

/** A budget a job charges, with the limit its definition gives it. */
export interface BudgetDefinition {
  readonly key: string;
  readonly limit: number;
  readonly periodMs: number;
}

/**
 * Make sure each budget has its row with the limit given (a changed definition updates it), in
 * key order so that concurrent enqueues lock budget rows in one order. `waiting` names the
 * budgets that jobs now wait for: their `available_at` becomes now unless it is already set (a
 * full or closed budget keeps its later time).
 */
export async function ensureBudgets(
  trx: Db,
  dialect: Dialect,
  budgets: readonly BudgetDefinition[],
  waiting: ReadonlySet<string>,
  now: Date,
): Promise<void> {
  const sorted = [...budgets].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const budget of sorted) {
    const insert = trx.insertInto("firm_queue_rate_budgets").values({
      key: budget.key,
      limit_count: budget.limit,
      period_ms: budget.periodMs,
      available_at: waiting.has(budget.key) ? now : null,
      created_at: now,
      updated_at: now,
    });
    const inserted = await dialect.ignoringConflicts(insert, "key").executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) continue;
    await trx
      .updateTable("firm_queue_rate_budgets")
      .set({
        limit_count: budget.limit,
        period_ms: budget.periodMs,
        updated_at: now,
        ...(waiting.has(budget.key) ? { available_at: sql<Date>`COALESCE(available_at, ${now})` } : {}),
      })
      .where("key", "=", budget.key)
      .execute();
  }
}

/** Jobs now wait for these existing budgets: see {@link ensureBudgets}. */
export async function markBudgetsWaiting(trx: Db, keys: readonly string[], now: Date): Promise<void> {
  if (keys.length === 0) return;
  await trx
    .updateTable("firm_queue_rate_budgets")
    .set({ available_at: sql<Date>`COALESCE(available_at, ${now})` })
    .where("key", "in", [...new Set(keys)].sort())
    .where("queue_name", "is", null)
    .execute();
}

const BUDGET_COLUMNS = ["key", "limit_count", "period_ms", "queue_name", "closed_until"] as const;

function toBudget(row: {
  key: string;
  limit_count: number;
  period_ms: number;
  queue_name: string | null;
  closed_until: Date | string | null;
}): BudgetRow {
  return {
    key: row.key,
    limit: Number(row.limit_count),
    periodMs: Number(row.period_ms),
    queueName: row.queue_name,
    closedUntil: toDate(row.closed_until),
  };
}

/**
 * Lock up to `limit` job budgets whose waiting jobs may start now, earliest first, skipping
 * budgets another claimer holds; only budgets with a job waiting in a queue of `scope`.
 */
export async function lockDueJobBudgets(
  trx: Db,
  dialect: Dialect,
  now: Date,
  limit: number,
  scope: QueueScope,
): Promise<BudgetRow[]> {
  let query = trx
    .selectFrom("firm_queue_rate_budgets as b")
    .select(BUDGET_COLUMNS.map((column) => `b.${column}` as const))
    .where("b.available_at", "<=", now)
    .where("b.queue_name", "is", null)
    .orderBy("b.available_at")
    .limit(limit);
  if (!("all" in scope))
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom("firm_queue_throttled_executions as t")
          .select("t.job_id")
          .whereRef("t.budget_key", "=", "b.key")
          .where(scopeCondition(scope, "t.queue_name")),
      ),
    );
  return (await dialect.withSkipLocked(query).execute()).map(toBudget);
}

/** Lock the budgets of these queues that are not full or closed now, skipping ones another claimer holds. */
export async function lockOpenQueueBudgets(
  trx: Db,
  dialect: Dialect,
  queues: readonly string[],
  now: Date,
): Promise<BudgetRow[]> {
  if (queues.length === 0) return [];
  const query = trx
    .selectFrom("firm_queue_rate_budgets")
    .select([...BUDGET_COLUMNS])
    .where("queue_name", "in", queues)
    .where((eb) => eb.or([eb("available_at", "is", null), eb("available_at", "<=", now)]))
    .orderBy("queue_name");
  return (await dialect.withSkipLocked(query).execute()).map(toBudget);
}

/** The budgets of these queues, unlocked, with when each is known to be full or closed until. */
export async function queueBudgetsOf(
  db: Db,
  queues: readonly string[],
): Promise<{ key: string; queueName: string; availableAt: Date | null }[]> {
  if (queues.length === 0) return [];
  const rows = await db
    .selectFrom("firm_queue_rate_budgets")
    .select(["key", "queue_name", "available_at"])
    .where("queue_name", "in", queues)
    .orderBy("queue_name")
    .execute();
  return rows.map((row) => ({ key: row.key, queueName: row.queue_name!, availableAt: toDate(row.available_at) }));
}

/**
 * The earliest time after `now` a budget opens: a job budget with waiting jobs, or one of these
 * queues' budgets, full or closed until then. Null when none will.
 */
export async function nextBudgetOpening(trx: Db, queues: readonly string[], now: Date): Promise<Date | null> {
  const row = await trx
    .selectFrom("firm_queue_rate_budgets")
    .select("available_at")
    .where("available_at", ">", now)
    .where((eb) =>
      queues.length === 0
        ? eb("queue_name", "is", null)
        : eb.or([eb("queue_name", "is", null), eb("queue_name", "in", queues)]),
    )
    .orderBy("available_at")
    .limit(1)
    .executeTakeFirst();
  return toDate(row?.available_at ?? null);
}

/** Set when a budget's waiting jobs may start next (null: none waits, or for a queue: not full). */
export async function setBudgetAvailableAt(trx: Db, key: string, at: Date | null): Promise<void> {
  await trx.updateTable("firm_queue_rate_budgets").set({ available_at: at }).where("key", "=", key).execute();
}

/**
 * Close a budget until `until` (a RateLimitedError): nothing of it starts before then. A budget
 * already closed for longer stays closed for longer.
 */
export async function closeBudget(trx: Db, key: string, until: Date, now: Date): Promise<void> {
  const later = sql<Date>`CASE WHEN closed_until IS NOT NULL AND closed_until > ${until} THEN closed_until ELSE ${until} END`;
  await trx
    .updateTable("firm_queue_rate_budgets")
    .set({ closed_until: later, available_at: later, updated_at: now })
    .where("key", "=", key)
    .execute();
}

/** Whether a budget has its row. */
export async function budgetExists(db: Db, key: string): Promise<boolean> {
  const row = await db.selectFrom("firm_queue_rate_budgets").select("key").where("key", "=", key).executeTakeFirst();
  return row !== undefined;
}

/** The budget of a queue's limit, if the queue has one. */
export async function queueBudgetOf(db: Db, queue: string): Promise<BudgetRow | null> {
  const row = await db
    .selectFrom("firm_queue_rate_budgets")
    .select([...BUDGET_COLUMNS])
    .where("queue_name", "=", queue)
    .executeTakeFirst();
  return row === undefined ? null : toBudget(row);
}

/** What workers need to know of budgets between claims: queue budgets, and when a job budget may next have work. */
export interface BudgetOutlook {
  /** Queues with a rate limit, and until when each is known to be full or closed (null: may have room). */
  readonly queues: ReadonlyMap<string, Date | null>;
  /** The earliest `available_at` of a job budget; null when no job waits for any budget. */
  readonly nextJobBudgetAt: Date | null;
}

/** Read the {@link BudgetOutlook}: two small indexed reads (nothing at all to find when no budget exists). */
export async function budgetOutlook(db: Db): Promise<BudgetOutlook> {
  const [queueRows, next] = await Promise.all([
    db
      .selectFrom("firm_queue_rate_budgets")
      .select(["queue_name", "available_at"])
      .where("queue_name", "is not", null)
      .execute(),
    db
      .selectFrom("firm_queue_rate_budgets")
      .select("available_at")
      .where("available_at", "is not", null)
      .where("queue_name", "is", null)
      .orderBy("available_at")
      .limit(1)
      .executeTakeFirst(),
  ]);
  return {
    queues: new Map(queueRows.map((row) => [row.queue_name!, toDate(row.available_at)])),
    nextJobBudgetAt: toDate(next?.available_at ?? null),
  };
}

/** Set or change a queue's budget. */
export async function upsertQueueBudget(
  trx: Db,
  dialect: Dialect,
  key: string,
  queue: string,
  limit: number,
  periodMs: number,
  now: Date,
): Promise<void> {
  const insert = trx.insertInto("firm_queue_rate_budgets").values({
    key,
    queue_name: queue,
    limit_count: limit,
    period_ms: periodMs,
    created_at: now,
    updated_at: now,
  });
  const inserted = await dialect.ignoringConflicts(insert, "key").executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return;
  await trx
    .updateTable("firm_queue_rate_budgets")
    .set({ limit_count: limit, period_ms: periodMs, available_at: null, updated_at: now })
    .where("key", "=", key)
    .execute();
}

/** Remove a budget and its start log; returns whether it existed. */
export async function deleteBudget(trx: Db, key: string): Promise<boolean> {
  const result = await trx.deleteFrom("firm_queue_rate_budgets").where("key", "=", key).executeTakeFirst();
  await trx.deleteFrom("firm_queue_rate_starts").where("budget_key", "=", key).execute();
  return Number(result.numDeletedRows) > 0;
}
