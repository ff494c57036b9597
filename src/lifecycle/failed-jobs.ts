import type { Db, Dialect } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { JobNotFailedError, JobNotFoundError, JobRunningError } from "../errors.js";
import { parseStoredError, type StoredError } from "../models/failed-execution.js";
import type { DispatchContext } from "./dispatch-context.js";
import { dispatchJobs, toDispatchable } from "./job-dispatch.js";
import { findJobInfo, jobBasics, type JobBasics } from "../models/job-info.js";
import { deleteJobs, type JobRow } from "../models/job.js";

/** Which failed jobs an operation looks at: all, or those of one job name and/or queue. */
export interface FailedJobFilter {
  readonly name?: string | undefined;
  readonly queue?: string | undefined;
}

/** A failed job as `firm.failedJobs.list()` shows it. */
export interface FailedJobInfo extends JobBasics {
  /** The error of the attempt that failed the job. */
  readonly error: StoredError;
  readonly failedAt: Date;
}

function failedJobs(db: Db, filter: FailedJobFilter) {
  let query = db.selectFrom("firm_queue_failed_executions as f").innerJoin("firm_queue_jobs as j", "j.id", "f.job_id");
  if (filter.name !== undefined) query = query.where("j.class_name", "=", filter.name);
  if (filter.queue !== undefined) query = query.where("j.queue_name", "=", filter.queue);
  return query;
}

/** Failed jobs in job id order, `limit` at a time after `afterId`. */
export async function listFailedJobs(
  db: Db,
  filter: FailedJobFilter,
  limit: number,
  afterId = 0,
): Promise<FailedJobInfo[]> {
  const rows = await failedJobs(db, filter)
    .selectAll("j")
    .select(["f.error as failure", "f.created_at as failed_at"])
    .where("f.job_id", ">", afterId)
    .orderBy("f.job_id")
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    ...jobBasics(row),
    error: parseStoredError(row.failure) ?? { name: "Error", message: "(no error was recorded)" },
    failedAt: toDate(row.failed_at),
  }));
}

/** How many failed jobs match `filter`. */
export async function countFailedJobs(db: Db, filter: FailedJobFilter): Promise<number> {
  const row = await failedJobs(db, filter)
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Lock the failed jobs with these ids (inside a claim transaction, skipping rows another operation
 * holds) and return their job rows. Throws, so the caller's transaction changes nothing, when
 * an id is not a failed job: {@link JobRunningError} for a running job, else
 * {@link JobNotFailedError} or {@link JobNotFoundError}.
 */
export async function lockFailedJobsById(
  trx: Db,
  dialect: Dialect,
  ids: readonly number[],
  action: "deleted" | "retried",
): Promise<JobRow[]> {
  if (ids.length === 0) return [];
  const query = failedJobs(trx, {}).selectAll("j").where("f.job_id", "in", ids);
  const rows = await dialect.withSkipLocked(query).execute();
  const found = new Set(rows.map((row) => Number(row.id)));
  for (const id of ids) if (!found.has(id)) await explainNotFailed(trx, id, action);
  return rows;
}

/** Lock the next `limit` failed jobs after job id `afterId` that match `filter`, in id order. */
export async function lockFailedJobsBatch(
  trx: Db,
  dialect: Dialect,
  filter: FailedJobFilter,
  afterId: number,
  limit: number,
): Promise<JobRow[]> {
  const query = failedJobs(trx, filter).selectAll("j").where("f.job_id", ">", afterId).orderBy("f.job_id").limit(limit);
  return dialect.withSkipLocked(query).execute();
}

/**
 * Send locked failed jobs back through dispatch as new: their failed rows go, attempts start
 * again from 0 (the last error stays as history), and they are due now.
 */
export async function retryLockedFailedJobs(
  trx: Db,
  jobs: readonly JobRow[],
  now: Date,
  context: DispatchContext,
): Promise<number> {
  if (jobs.length === 0) return 0;
  const ids = jobs.map((job) => Number(job.id));
  await trx.deleteFrom("firm_queue_failed_executions").where("job_id", "in", ids).execute();
  await trx
    .updateTable("firm_queue_jobs")
    .set({ attempts: 0, scheduled_at: now, updated_at: now })
    .where("id", "in", ids)
    .execute();
  // A failed job holds no concurrency slot (it gave it up when its attempt failed), so dispatch
  // decides afresh whether it may run now.
  await dispatchJobs(
    trx,
    jobs.map((job) => ({ ...toDispatchable(job), scheduledAt: now })),
    now,
    context,
  );
  return ids.length;
}

/** Delete locked failed jobs. They hold no concurrency slot: it was given up when they failed. */
export async function discardLockedFailedJobs(trx: Db, jobs: readonly JobRow[]): Promise<number> {
  return deleteJobs(
    trx,
    jobs.map((job) => Number(job.id)),
  );
}

async function explainNotFailed(trx: Db, id: number, action: "deleted" | "retried"): Promise<never> {
  const info = await findJobInfo(trx, id);
  if (!info) throw new JobNotFoundError(id);
  if (info.state === "claimed") {
    const claim = await trx
      .selectFrom("firm_queue_claimed_executions")
      .select("process_id")
      .where("job_id", "=", id)
      .executeTakeFirst();
    throw new JobRunningError(id, claim?.process_id == null ? null : Number(claim.process_id), action);
  }
  if (info.state === "failed")
    throw new JobNotFailedError(id, "being retried or deleted by another operation right now");
  throw new JobNotFailedError(id, info.state);
}
