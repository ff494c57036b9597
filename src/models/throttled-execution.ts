import { type RawBuilder, sql } from "kysely";
import type { Db, Dialect } from "../database/dialect.js";

/** A due job waiting for its rate-limit budget. */
export interface ThrottledJob {
  readonly id: number;
  readonly queueName: string;
  readonly priority: number;
  readonly budgetKey: string;
}

/** Which queues a claim may take from: every queue, or the ones named and those starting with a prefix. */
export type QueueScope =
  | { readonly all: true }
  | { readonly only: readonly string[]; readonly prefixes: readonly string[] };

/** The queue scope of a worker's `queues` patterns (`*` anywhere: every queue). */
export function scopeOfPatterns(patterns: readonly string[]): QueueScope {
  if (patterns.includes("*")) return { all: true };
  return {
    only: patterns.filter((pattern) => !pattern.endsWith("*")),
    prefixes: patterns.filter((pattern) => pattern.endsWith("*")).map((pattern) => pattern.slice(0, -1)),
  };
}

/** Whether `queue` is in `scope`. */
export function inScope(scope: QueueScope, queue: string): boolean {
  return "all" in scope || scope.only.includes(queue) || scope.prefixes.some((prefix) => queue.startsWith(prefix));
}

/** `column` holds a queue of `scope` (true for every queue). */
export function scopeCondition(scope: QueueScope, column: string): RawBuilder<boolean> {
  if ("all" in scope) return sql<boolean>`1 = 1`;
  const parts = [
    ...(scope.only.length > 0 ? [sql`${sql.ref(column)} IN (${sql.join(scope.only)})`] : []),
    ...scope.prefixes.map(
      (prefix) => sql`${sql.ref(column)} LIKE ${`${prefix.replace(/[!%_]/g, (char) => `!${char}`)}%`} ESCAPE '!'`,
    ),
  ];
  return parts.length === 0 ? sql<boolean>`1 = 0` : sql<boolean>`(${sql.join(parts, sql` OR `)})`;
}

/** Park due jobs until their budget has room: one multi-row INSERT. */
export async function insertThrottledExecutions(trx: Db, jobs: readonly ThrottledJob[], now: Date): Promise<void> {
  if (jobs.length === 0) return;
  await trx
    .insertInto("firm_queue_throttled_executions")
    .values(
      jobs.map((job) => ({
        job_id: job.id,
        queue_name: job.queueName,
        priority: job.priority,
        budget_key: job.budgetKey,
        created_at: now,
      })),
    )
    .execute();
}

/** What to leave out of {@link lockThrottledJobs}: queues without room, and jobs already taken. */
export interface ThrottledExclusions {
  readonly queues: readonly string[];
  readonly jobIds: readonly number[];
}

/**
 * Lock up to `limit` waiting jobs of one budget in `scope`, by (priority, job id), skipping rows
 * another transaction holds, queues that are paused and what `without` names. Returns them in
 * that order with their queues.
 */
export async function lockThrottledJobs(
  trx: Db,
  dialect: Dialect,
  budgetKey: string,
  scope: QueueScope,
  limit: number,
  without: ThrottledExclusions = { queues: [], jobIds: [] },
): Promise<{ jobId: number; queueName: string }[]> {
  let query = trx
    .selectFrom("firm_queue_throttled_executions")
    .select(["job_id", "queue_name"])
    .where("budget_key", "=", budgetKey)
    .where("queue_name", "not in", trx.selectFrom("firm_queue_pauses").select("queue_name"))
    .orderBy("priority")
    .orderBy("job_id")
    .limit(limit);
  if (!("all" in scope)) query = query.where(scopeCondition(scope, "queue_name"));
  if (without.queues.length > 0) query = query.where("queue_name", "not in", without.queues);
  if (without.jobIds.length > 0) query = query.where("job_id", "not in", without.jobIds);
  const rows = await dialect.withSkipLocked(query).execute();
  return rows.map((row) => ({ jobId: Number(row.job_id), queueName: row.queue_name }));
}

/** Whether any job waits for `budgetKey` (in any queue but those of `exceptQueues`). */
export async function hasThrottledJobs(
  trx: Db,
  budgetKey: string,
  exceptQueues: readonly string[] = [],
): Promise<boolean> {
  let query = trx
    .selectFrom("firm_queue_throttled_executions")
    .select(sql<number>`1`.as("one"))
    .where("budget_key", "=", budgetKey);
  if (exceptQueues.length > 0) query = query.where("queue_name", "not in", exceptQueues);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
}

/** The jobs leave the waiting table (they are claimed, or cancelled). */
export async function deleteThrottledExecutions(trx: Db, jobIds: readonly number[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  const result = await trx
    .deleteFrom("firm_queue_throttled_executions")
    .where("job_id", "in", jobIds)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
