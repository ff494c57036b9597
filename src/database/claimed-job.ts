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
};

/** The claimed-job columns of the jobs table as `alias`, for a claim's SELECT list. */
export function claimedJobColumns(alias: string): RawBuilder<unknown> {
  return sql.raw(CLAIMED_JOB_COLUMNS.map((column) => `${alias}.${column}`).join(", "));
}
