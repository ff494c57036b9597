import type { Db } from "../database/dialect.js";
import type { JobState } from "./job-info.js";

const TABLES = [
  ["failed", "firm_queue_failed_executions"],
  ["claimed", "firm_queue_claimed_executions"],
  ["ready", "firm_queue_ready_executions"],
  ["blocked", "firm_queue_blocked_executions"],
  ["throttled", "firm_queue_throttled_executions"],
  ["scheduled", "firm_queue_scheduled_executions"],
] as const;

/**
 * The state of each of `ids`: one lookup per execution table on its unique `job_id` index, then
 * the jobs table for the rest (pending, finished or cancelled; absent from the map when the job is gone).
 */
export async function jobStates(db: Db, ids: readonly number[]): Promise<Map<number, JobState>> {
  const states = new Map<number, JobState>();
  if (ids.length === 0) return states;
  const found = await Promise.all(
    TABLES.map(([, table]) =>
      db
        .selectFrom(table as "firm_queue_ready_executions")
        .select("job_id")
        .where("job_id", "in", ids)
        .execute(),
    ),
  );
  found.forEach((rows, index) => {
    for (const row of rows) if (!states.has(Number(row.job_id))) states.set(Number(row.job_id), TABLES[index]![0]);
  });
  const rest = ids.filter((id) => !states.has(id));
  if (rest.length > 0) {
    const rows = await db
      .selectFrom("firm_queue_jobs")
      .select(["id", "finished_at", "cancelled_at", "unmet_dependencies"])
      .where("id", "in", rest)
      .execute();
    for (const row of rows)
      states.set(
        Number(row.id),
        row.finished_at === null && row.unmet_dependencies > 0
          ? "pending"
          : row.finished_at !== null && row.cancelled_at !== null
            ? "cancelled"
            : "finished",
      );
  }
  return states;
}
