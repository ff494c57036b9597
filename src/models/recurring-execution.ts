import type { Db, Dialect } from "../database/dialect.js";
import type { UniqueIndex } from "../database/unique-violation.js";

/** The index that makes each tick of a task happen once: unique (task_key, run_at). */
export const RECURRING_TICK_INDEX: UniqueIndex = {
  name: "index_firm_queue_recurring_executions_on_task_key_and_run_at",
  table: "firm_queue_recurring_executions",
  columns: ["task_key", "run_at"],
};

/** Record that tick `runAt` of a task enqueued `jobId`; fails on a tick already recorded. */
export async function insertRecurringExecution(
  trx: Db,
  execution: { jobId: number; taskKey: string; runAt: Date },
  now: Date,
): Promise<void> {
  await trx
    .insertInto("firm_queue_recurring_executions")
    .values({ job_id: execution.jobId, task_key: execution.taskKey, run_at: execution.runAt, created_at: now })
    .execute();
}

/** Whether `error` says another scheduler recorded this tick first (and nothing else went wrong). */
export function isDuplicateTick(dialect: Dialect, error: unknown): boolean {
  return dialect.isUniqueViolation(error, RECURRING_TICK_INDEX);
}
