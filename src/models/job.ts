import type { Selectable } from "kysely";
import type { BulkInsert, Db, Dialect } from "../database/dialect.js";
import type { JobsTable } from "../database/schema.js";
import type { NewJob } from "../database/insert-rows.js";

export type { NewJob } from "../database/insert-rows.js";

/** A jobs row as read from the database. */
export type JobRow = Selectable<JobsTable>;

/** What routing a job to its next execution table needs to know. */
export interface DispatchableJob {
  readonly id: number;
  readonly className: string;
  readonly queueName: string;
  readonly priority: number;
  readonly scheduledAt: Date;
  readonly concurrencyKey: string | null;
  /** The budget of the job's own rate limit; absent or null: none. */
  readonly rateLimitKey?: string | null;
}

/** Rows per INSERT: keeps every database under its bound-parameter limit. */
const INSERT_CHUNK = 1000;

/**
 * Insert jobs and return their ids in input order: one multi-row INSERT per 1000 jobs, or the
 * dialect's one statement (`bulk`) for two or more. Ids come back through RETURNING; one
 * statement's ids ascend in row order, so sorting them restores it whatever order the database
 * returns them in.
 */
export async function insertJobs(trx: Db, jobs: readonly NewJob[], now: Date, bulk?: BulkInsert): Promise<number[]> {
  if (bulk !== undefined && jobs.length > 1) return bulk.jobs(trx, jobs, now);
  const ids: number[] = [];
  for (let start = 0; start < jobs.length; start += INSERT_CHUNK) {
    const chunk = jobs.slice(start, start + INSERT_CHUNK);
    const rows = await trx
      .insertInto("firm_queue_jobs")
      .values(
        chunk.map((job) => ({
          queue_name: job.queueName,
          class_name: job.className,
          arguments: job.arguments,
          priority: job.priority,
          scheduled_at: job.scheduledAt,
          concurrency_key: job.concurrencyKey,
          job_key: job.jobKey ?? null,
          trace_context: job.traceContext ?? null,
          unmet_dependencies: job.unmetDependencies ?? 0,
          has_dependents: job.hasDependents ? 1 : 0,
          ...(job.rateLimitKey ? { rate_limit_key: job.rateLimitKey } : {}),
          ...(job.batchId ? { batch_id: job.batchId } : {}),
          created_at: now,
          updated_at: now,
        })),
      )
      .returning("id")
      .execute();
    ids.push(...rows.map((row) => Number(row.id)).sort((a, b) => a - b));
  }
  return ids;
}

/**
 * Record finished attempts (keep the rows with `finished_at` set, or delete them when finished jobs
 * are not kept) and return those of `jobIds` that have
 * dependents, read from the rows as this transaction locked them: the UPDATE or DELETE waits for
 * an enqueue adding a dependent to one of them, and then sees its mark.
 */
export async function finishJobs(
  trx: Db,
  dialect: Dialect,
  jobIds: readonly number[],
  now: Date,
  preserve: boolean,
): Promise<number[]> {
  if (jobIds.length === 0) return [];
  if (!preserve) {
    const rows = await trx
      .deleteFrom("firm_queue_jobs")
      .where("id", "in", jobIds)
      .returning(["id", "has_dependents"])
      .execute();
    return rows.filter((row) => row.has_dependents !== 0).map((row) => Number(row.id));
  }
  const update = trx
    .updateTable("firm_queue_jobs")
    .set((eb) => ({ finished_at: now, updated_at: now, attempts: eb("attempts", "+", 1) }))
    .where("id", "in", jobIds);
  if (dialect.returnsFromUpdate) {
    const rows = await update.returning(["id", "has_dependents"]).execute();
    return rows.filter((row) => row.has_dependents !== 0).map((row) => Number(row.id));
  }
  await update.execute();
  // The rows are locked by the UPDATE: this locking read sees them as they are now.
  const rows = await dialect
    .withRowLock(
      trx.selectFrom("firm_queue_jobs").select("id").where("id", "in", jobIds).where("has_dependents", "=", 1),
    )
    .execute();
  return rows.map((row) => Number(row.id));
}

/**
 * Count a failed attempt and keep its error as the job's last error. `changes` moves the job on:
 * a new `scheduledAt` for a retry, `finishedAt` for a discarded job.
 */
export async function recordAttemptFailure(
  trx: Db,
  jobId: number,
  errorJson: string,
  now: Date,
  changes: { readonly scheduledAt?: Date; readonly finishedAt?: Date } = {},
): Promise<void> {
  await trx
    .updateTable("firm_queue_jobs")
    .set((eb) => ({
      updated_at: now,
      attempts: eb("attempts", "+", 1),
      last_error: errorJson,
      ...(changes.scheduledAt ? { scheduled_at: changes.scheduledAt } : {}),
      ...(changes.finishedAt ? { finished_at: changes.finishedAt } : {}),
    }))
    .where("id", "=", jobId)
    .execute();
}

/** Keep `errorJson` as a job's last error without counting an attempt (a rate-limited run), due at `scheduledAt` if given. */
export async function recordLastError(
  trx: Db,
  jobId: number,
  errorJson: string,
  now: Date,
  scheduledAt?: Date,
): Promise<void> {
  await trx
    .updateTable("firm_queue_jobs")
    .set({ updated_at: now, last_error: errorJson, ...(scheduledAt ? { scheduled_at: scheduledAt } : {}) })
    .where("id", "=", jobId)
    .execute();
}

/**
 * Delete jobs by id; their waiting or failed rows go with them (ON DELETE CASCADE). Never called
 * for a claimed job: the claims table has no foreign key, and a claim is removed by its own path.
 * Returns how many went.
 */
export async function deleteJobs(trx: Db, jobIds: readonly number[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  const result = await trx.deleteFrom("firm_queue_jobs").where("id", "in", jobIds).executeTakeFirst();
  return Number(result.numDeletedRows);
}
