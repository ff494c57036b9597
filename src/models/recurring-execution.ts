import { sql } from "kysely";
import type { Db, DialectName } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { isUniqueViolation, type UniqueIndex } from "../database/unique-violation.js";

/** The index that makes each tick of a task happen once: unique (task_key, run_at). */
export const RECURRING_TICK_INDEX: UniqueIndex = {
  name: "index_firm_queue_recurring_executions_on_task_key_and_run_at",
  table: "firm_queue_recurring_executions",
  columns: ["task_key", "run_at"],
};

/** Record that tick `runAt` of a task enqueued `jobId`; fails on a tick already recorded. */
export async function insertRecurringExecution(trx: Db, execution: { jobId: number; taskKey: string; runAt: Date }, now: Date): Promise<void> {
  await trx
    .insertInto("firm_queue_recurring_executions")
    .values({ job_id: execution.jobId, task_key: execution.taskKey, run_at: execution.runAt, created_at: now })
    .execute();
}

/** Whether tick `runAt` of a task has already been recorded (by any scheduler). */
export async function recurringExecutionExists(db: Db, taskKey: string, runAt: Date): Promise<boolean> {
  const row = await db
    .selectFrom("firm_queue_recurring_executions")
    .select("id")
    .where("task_key", "=", taskKey)
    .where("run_at", "=", runAt)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether `error` says another scheduler recorded this tick first (and nothing else went wrong). */
export function isDuplicateTick(dialect: DialectName, error: unknown): boolean {
  return isUniqueViolation(dialect, error, RECURRING_TICK_INDEX);
}

/**
 * The latest recorded tick of each task that has one. Rows go with their jobs, so a task whose
 * finished jobs were deleted has no last run.
 */
export async function lastRunTimes(db: Db): Promise<Map<string, Date>> {
  const rows = await db
    .selectFrom("firm_queue_recurring_executions")
    .select(["task_key", sql<Date | string>`MAX(run_at)`.as("last_run_at")])
    .groupBy("task_key")
    .execute();
  return new Map(rows.map((row) => [row.task_key, toDate(row.last_run_at)]));
}
