import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { jobBasics, type JobBasics } from "./job-info.js";

/** A job enqueued and not yet run: waiting for a worker, its time, or a concurrency slot. */
export interface WaitingJob extends JobBasics {
  readonly state: "ready" | "scheduled" | "blocked";
  readonly scheduledAt: Date | null;
}

/**
 * Every job that has not started, in id order (the order they were enqueued), optionally of one
 * job name and one queue: one query joining the three waiting execution tables.
 */
export async function listWaitingJobs(
  db: Db,
  filter: { readonly name?: string; readonly queue?: string } = {},
): Promise<WaitingJob[]> {
  let query = db
    .selectFrom("firm_queue_jobs as j")
    .leftJoin("firm_queue_ready_executions as r", "r.job_id", "j.id")
    .leftJoin("firm_queue_scheduled_executions as s", "s.job_id", "j.id")
    .leftJoin("firm_queue_blocked_executions as b", "b.job_id", "j.id")
    .select([
      "j.id",
      "j.class_name",
      "j.queue_name",
      "j.priority",
      "j.arguments",
      "j.attempts",
      "j.created_at",
      "j.scheduled_at",
      "r.id as ready_id",
      "s.id as scheduled_id",
    ])
    .where((eb) => eb.or([eb("r.id", "is not", null), eb("s.id", "is not", null), eb("b.id", "is not", null)]));
  if (filter.name !== undefined) query = query.where("j.class_name", "=", filter.name);
  if (filter.queue !== undefined) query = query.where("j.queue_name", "=", filter.queue);
  const rows = await query.orderBy("j.id").execute();
  return rows.map((row) => ({
    ...jobBasics(row),
    state: row.ready_id !== null ? "ready" : row.scheduled_id !== null ? "scheduled" : "blocked",
    scheduledAt: toDate(row.scheduled_at),
  }));
}
