import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import type { JobRow } from "./job.js";
import { insertReadyExecutions } from "./ready-execution.js";
import { insertScheduledExecutions } from "./scheduled-execution.js";

/** What routing a job to its next execution table needs to know. */
export interface DispatchableJob {
  readonly id: number;
  readonly className: string;
  readonly queueName: string;
  readonly priority: number;
  readonly scheduledAt: Date;
  readonly concurrencyKey: string | null;
}

/** How many dispatched jobs went where. */
export interface DispatchCounts {
  ready: number;
  scheduled: number;
}

/**
 * Put jobs where they belong now: due jobs become ready, future jobs wait in scheduled
 * executions. The single place that decides a job's next state, used by enqueue, the dispatcher
 * and every path that puts a job back in line.
 */
export async function dispatchJobs(trx: Db, jobs: readonly DispatchableJob[], now: Date): Promise<DispatchCounts> {
  const due = jobs.filter((job) => job.scheduledAt.getTime() <= now.getTime());
  const later = jobs.filter((job) => job.scheduledAt.getTime() > now.getTime());
  await insertScheduledExecutions(trx, later, now);
  await insertReadyExecutions(trx, due, now);
  return { ready: due.length, scheduled: later.length };
}

/** Dispatch jobs already in the database by id, as due now (the dispatcher, releases, retries). */
export async function dispatchStoredJobsNow(trx: Db, jobIds: readonly number[], now: Date): Promise<DispatchCounts> {
  if (jobIds.length === 0) return { ready: 0, scheduled: 0 };
  const rows = await trx.selectFrom("firm_queue_jobs").selectAll().where("id", "in", jobIds).execute();
  return dispatchJobs(trx, rows.map((row) => ({ ...toDispatchable(row), scheduledAt: now })), now);
}

export function toDispatchable(row: JobRow): DispatchableJob {
  return {
    id: Number(row.id),
    className: row.class_name,
    queueName: row.queue_name,
    priority: row.priority,
    scheduledAt: toDate(row.scheduled_at) ?? new Date(0),
    concurrencyKey: row.concurrency_key,
  };
}
