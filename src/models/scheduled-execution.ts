import type { Db, Dialect } from "../database/dialect.js";
import type { DispatchableJob } from "./job.js";

/** Park jobs until their time comes: one multi-row INSERT per 1000 jobs. */
export async function insertScheduledExecutions(trx: Db, jobs: readonly DispatchableJob[], now: Date): Promise<void> {
  // 1000 rows per INSERT: keeps every database under its bound-parameter limit.
  for (let start = 0; start < jobs.length; start += 1000)
    await trx
      .insertInto("firm_queue_scheduled_executions")
      .values(
        jobs.slice(start, start + 1000).map((job) => ({
          job_id: job.id,
          queue_name: job.queueName,
          priority: job.priority,
          scheduled_at: job.scheduledAt,
          created_at: now,
        })),
      )
      .execute();
}

/**
 * Take up to `limit` scheduled jobs that are due, oldest schedule first and then by priority,
 * and delete their scheduled rows; the caller makes them ready in the same transaction.
 */
export async function takeDueScheduledExecutions(
  trx: Db,
  dialect: Dialect,
  limit: number,
  now: Date,
): Promise<number[]> {
  const query = trx
    .selectFrom("firm_queue_scheduled_executions")
    .select("job_id")
    .where("scheduled_at", "<=", now)
    .orderBy("scheduled_at")
    .orderBy("priority")
    .orderBy("job_id")
    .limit(limit);
  const rows = await dialect.withSkipLocked(query).execute();
  const jobIds = rows.map((row) => Number(row.job_id));
  if (jobIds.length > 0)
    await trx.deleteFrom("firm_queue_scheduled_executions").where("job_id", "in", jobIds).execute();
  return jobIds;
}
