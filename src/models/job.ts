import type { Selectable } from "kysely";
import type { Db } from "../database/dialect.js";
import type { JobsTable } from "../database/schema.js";

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
}

/** What enqueue knows about a job before it has an id. */
export interface NewJob {
  readonly queueName: string;
  readonly className: string;
  /** JSON text from `serializeArguments`. */
  readonly arguments: string;
  readonly priority: number;
  /** When the job may run; `now` for jobs due at once. */
  readonly scheduledAt: Date;
  readonly concurrencyKey: string | null;
  /** The OpenTelemetry context of the enqueue, as JSON text (see tracing.ts); absent: none. */
  readonly traceContext?: string | null;
}

/** Rows per INSERT: keeps every database under its bound-parameter limit. */
const INSERT_CHUNK = 1000;

/**
 * Insert jobs and return their ids in input order: one multi-row INSERT per 1000 jobs. Ids come
 * back through RETURNING; one statement's ids ascend in row order, so sorting them restores it
 * whatever order the database returns them in.
 */
export async function insertJobs(trx: Db, jobs: readonly NewJob[], now: Date): Promise<number[]> {
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
          trace_context: job.traceContext ?? null,
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

/** Record a finished attempt: either keep the row with `finished_at`, or delete it. */
export async function markJobsFinished(
  trx: Db,
  jobIds: readonly number[],
  now: Date,
  preserve: boolean,
): Promise<void> {
  if (jobIds.length === 0) return;
  if (preserve) {
    await trx
      .updateTable("firm_queue_jobs")
      .set((eb) => ({ finished_at: now, updated_at: now, attempts: eb("attempts", "+", 1) }))
      .where("id", "in", jobIds)
      .execute();
  } else {
    await trx.deleteFrom("firm_queue_jobs").where("id", "in", jobIds).execute();
  }
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

/** Delete jobs by id; their executions go with them (ON DELETE CASCADE). Returns how many went. */
export async function deleteJobs(trx: Db, jobIds: readonly number[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  const result = await trx.deleteFrom("firm_queue_jobs").where("id", "in", jobIds).executeTakeFirst();
  return Number(result.numDeletedRows);
}
