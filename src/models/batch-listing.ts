import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import type { BatchCounts, BatchState } from "./batch.js";
import type { BatchJobEnd } from "./batch-job.js";
import type { JobState } from "./job-info.js";
import { jobStates } from "./job-states.js";

/** A batch with its counts and times, as `firm.inspect.batches()` lists it. */
export interface BatchSummary extends BatchCounts {
  readonly id: number;
  /** `pending` while some of its jobs have not ended; then `finished`, `failed` or `cancelled`. */
  readonly state: BatchState;
  readonly createdAt: Date;
  /** When its last job ended (and its callbacks were enqueued); null while it is pending. */
  readonly endedAt: Date | null;
}

/** One job of a batch, as `firm.inspect.batch()` pages them. */
export interface BatchJobSummary {
  readonly id: number;
  /** Its job name; null once its row is gone (a finished job cleared by cleanup). */
  readonly name: string | null;
  /** Its state now; `"deleted"` once its row is gone. */
  readonly state: JobState | "deleted";
  /** How its batch counted its end; null while it has not ended. A job failed for good and retried by hand stays counted as `failed`. */
  readonly ended: BatchJobEnd | null;
}

/** A page of batches and where the next one starts. */
export interface BatchRowPage {
  readonly batches: BatchSummary[];
  /** The id the next page starts below; null on the last page. */
  readonly nextBefore: number | null;
}

/** A page of a batch's jobs and where the next one starts. */
export interface BatchJobRowPage {
  readonly jobs: BatchJobSummary[];
  /** The job id the next page starts after; null on the last page. */
  readonly nextAfter: number | null;
}

const SUMMARY_COLUMNS = [
  "id",
  "state",
  "total",
  "pending",
  "finished",
  "failed",
  "cancelled",
  "created_at",
  "ended_at",
] as const;

/**
 * Up to `limit` batches, newest first (highest id first), below the id `before` when given: one
 * range of the primary key, however many batches there are.
 */
export async function listBatchRows(db: Db, limit: number, before: number | null): Promise<BatchRowPage> {
  let query = db.selectFrom("firm_queue_batches").select(SUMMARY_COLUMNS);
  if (before !== null) query = query.where("id", "<", before);
  const rows = await query
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();
  const batches = rows.slice(0, limit).map(toSummary);
  return { batches, nextBefore: rows.length > limit ? batches.at(-1)!.id : null };
}

/** One batch's summary and the JSON of its callbacks, or undefined when there is no such batch. */
export async function findBatchRow(
  db: Db,
  id: number,
): Promise<(BatchSummary & { readonly callbacks: string }) | undefined> {
  const row = await db
    .selectFrom("firm_queue_batches")
    .select([...SUMMARY_COLUMNS, "callbacks"])
    .where("id", "=", id)
    .executeTakeFirst();
  return row === undefined ? undefined : { ...toSummary(row), callbacks: row.callbacks };
}

/**
 * Up to `limit` jobs of batch `batchId` in the order they were added (by job id), after the job id
 * `after` when given, with their names and states now. Reads the batch's membership rows through
 * its `batch_id` index, each job by its key, and the listed jobs' states: the cost of one page
 * stays the page's, whatever the batch's size, but for that index's range of the batch.
 */
export async function listBatchJobRows(
  db: Db,
  batchId: number,
  limit: number,
  after: number | null,
): Promise<BatchJobRowPage> {
  let query = db
    .selectFrom("firm_queue_batch_jobs as m")
    .leftJoin("firm_queue_jobs as j", "j.id", "m.job_id")
    .select(["m.job_id", "m.state", "j.class_name"])
    .where("m.batch_id", "=", batchId);
  if (after !== null) query = query.where("m.job_id", ">", after);
  const rows = await query
    .orderBy("m.job_id")
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const states = await jobStates(
    db,
    page.filter((row) => row.class_name !== null).map((row) => Number(row.job_id)),
  );
  const jobs = page.map((row) => ({
    id: Number(row.job_id),
    name: row.class_name ?? null,
    state: states.get(Number(row.job_id)) ?? ("deleted" as const),
    ended: (row.state ?? null) as BatchJobEnd | null,
  }));
  return { jobs, nextAfter: rows.length > limit ? jobs.at(-1)!.id : null };
}

function toSummary(row: {
  id: number;
  state: string;
  total: number;
  pending: number;
  finished: number;
  failed: number;
  cancelled: number;
  created_at: Date | string;
  ended_at: Date | string | null;
}): BatchSummary {
  return {
    id: Number(row.id),
    state: row.state as BatchState,
    total: Number(row.total),
    pending: Number(row.pending),
    finished: Number(row.finished),
    failed: Number(row.failed),
    cancelled: Number(row.cancelled),
    createdAt: toDate(row.created_at),
    endedAt: toDate(row.ended_at),
  };
}
