import { type RawBuilder, type Selectable, sql } from "kysely";
import type { JobsTable } from "./schema.js";

/**
 * The columns of a job that running it reads: what its handler, its events and the record of its
 * outcome need. Every database's claim reads back these and no others; the rest of the row (its
 * last error, progress, result, finish and cancel times) is the job's history, which a worker
 * never looks at, and parsing it for every claimed job was a share of a busy worker's time
 * (bench/results/history.md, "Hot path, sixth pass").
 */
export const CLAIMED_JOB_COLUMNS = [
  "id",
  "queue_name",
  "class_name",
  "arguments",
  "priority",
  "attempts",
  "concurrency_key",
  "semaphore_id",
  "job_key",
  "trace_context",
  "scheduled_at",
  "created_at",
  // Whether its finish must release dependents (migration 012): a job without them takes the
  // one-statement finish.
  "has_dependents",
  // The batch it belongs to (migration 015), for `context.batch`; null for most jobs.
  "batch_id",
] as const;

/**
 * A job as a claim returns it. `result` is not read back (a claimed job has none yet): the runner
 * sets it to what the handler returned, for the write that records the job finished.
 */
export type ClaimedJob = Pick<Selectable<JobsTable>, (typeof CLAIMED_JOB_COLUMNS)[number]> & {
  result?: string | null;
  /**
   * Whether the claim itself marked this job started (`claimed_executions.started_at`): the claim
   * took it for a free slot, and the worker must start it at once. Each database answers it in
   * its own form (a boolean, or 1 and 0): read it through {@link markedAtClaim}. Absent or false:
   * the job waits in the worker's buffer, and its start is marked when it starts.
   */
  readonly claim_started?: boolean | number | string | null;
};

/** Whether `job`'s claim was marked started when it was made (see {@link ClaimedJob.claim_started}). */
export function markedAtClaim(job: ClaimedJob): boolean {
  const flag = job.claim_started;
  return flag === true || (flag !== false && flag != null && Number(flag) === 1);
}

/** The claimed-job columns of the jobs table as `alias`, for a claim's SELECT list. */
export function claimedJobColumns(alias: string): RawBuilder<unknown> {
  return sql.raw(CLAIMED_JOB_COLUMNS.map((column) => `${alias}.${column}`).join(", "));
}
