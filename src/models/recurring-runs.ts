import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import type { JobState } from "./job-info.js";
import { jobStates } from "./job-states.js";

/** One tick of a recurring task that enqueued a job, and what became of the job. */
export interface RecurringRun {
  readonly runAt: Date;
  readonly jobId: number;
  /** The job's state now; `deleted` once it is gone (finished and not kept, discarded, cleared). */
  readonly state: JobState | "deleted";
}

/**
 * The latest `limit` runs of each task in `keys`, newest first: one read per task on the unique
 * `(task_key, run_at)` index, then the jobs' states.
 */
export async function latestRecurringRuns(
  db: Db,
  keys: readonly string[],
  limit: number,
): Promise<Map<string, RecurringRun[]>> {
  const perTask = await Promise.all(
    keys.map((key) =>
      db
        .selectFrom("firm_queue_recurring_executions")
        .select(["task_key", "job_id", "run_at"])
        .where("task_key", "=", key)
        .orderBy("run_at", "desc")
        .limit(limit)
        .execute(),
    ),
  );
  const states = await jobStates(
    db,
    perTask.flat().map((row) => Number(row.job_id)),
  );
  const runs = new Map<string, RecurringRun[]>();
  keys.forEach((key, index) => {
    runs.set(
      key,
      perTask[index]!.map((row) => ({
        runAt: toDate(row.run_at),
        jobId: Number(row.job_id),
        state: states.get(Number(row.job_id)) ?? "deleted",
      })),
    );
  });
  return runs;
}
