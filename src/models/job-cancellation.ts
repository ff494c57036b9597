import type { Db, Dialect } from "../database/dialect.js";

/** A job taken out of line by a cancel, and whether it held a concurrency slot (it was ready). */
export interface TakenJob {
  readonly jobId: number;
  readonly wasReady: boolean;
}

/** What cancel-by-filter selects: every condition given must match. */
export interface CancelFilter {
  readonly queue?: string | undefined;
  readonly name?: string | undefined;
  readonly key?: string | undefined;
}

/**
 * Delete the ready, throttled, scheduled and blocked rows of `jobIds`: the jobs that were waiting leave the
 * line. The DELETEs wait for row locks a claim holds, so a job a worker is claiming right now is
 * either taken here or, once the claim commits, found claimed by {@link lockClaims}.
 */
export async function takeWaitingJobs(trx: Db, jobIds: readonly number[]): Promise<TakenJob[]> {
  if (jobIds.length === 0) return [];
  const ready = await trx
    .deleteFrom("firm_queue_ready_executions")
    .where("job_id", "in", jobIds)
    .returning("job_id")
    .execute();
  const scheduled = await trx
    .deleteFrom("firm_queue_scheduled_executions")
    .where("job_id", "in", jobIds)
    .returning("job_id")
    .execute();
  const blocked = await trx
    .deleteFrom("firm_queue_blocked_executions")
    .where("job_id", "in", jobIds)
    .returning("job_id")
    .execute();
  // A job waiting for rate-limit budget went through its concurrency admission: it holds its slot like a ready one.
  const throttled = await trx
    .deleteFrom("firm_queue_throttled_executions")
    .where("job_id", "in", jobIds)
    .returning("job_id")
    .execute();
  return [
    ...[...ready, ...throttled].map((row) => ({ jobId: Number(row.job_id), wasReady: true })),
    ...[...scheduled, ...blocked].map((row) => ({ jobId: Number(row.job_id), wasReady: false })),
  ];
}

/** The jobs among `jobIds` that a process has claimed, their claims locked until the transaction ends. */
export async function lockClaims(trx: Db, dialect: Dialect, jobIds: readonly number[]): Promise<number[]> {
  if (jobIds.length === 0) return [];
  const rows = await dialect
    .withRowLock(trx.selectFrom("firm_queue_claimed_executions").select("job_id").where("job_id", "in", jobIds))
    .execute();
  return rows.map((row) => Number(row.job_id));
}

/** The jobs among `jobIds` waiting for their dependencies (pending), locked until the transaction ends. */
export async function lockPendingJobs(trx: Db, dialect: Dialect, jobIds: readonly number[]): Promise<number[]> {
  if (jobIds.length === 0) return [];
  const rows = await dialect
    .withRowLock(
      trx
        .selectFrom("firm_queue_jobs")
        .select("id")
        .where("id", "in", jobIds)
        .where("finished_at", "is", null)
        .where("unmet_dependencies", ">", 0),
    )
    .execute();
  return rows.map((row) => Number(row.id));
}

/** Record waiting jobs as cancelled: they end now, kept like finished jobs. */
export async function markCancelled(trx: Db, jobIds: readonly number[], now: Date): Promise<void> {
  if (jobIds.length === 0) return;
  await trx
    .updateTable("firm_queue_jobs")
    .set({ cancelled_at: now, finished_at: now, updated_at: now })
    .where("id", "in", jobIds)
    .execute();
}

/** Ask for running jobs to be cancelled: their workers hear of it through {@link cancelledClaimIds}. */
export async function requestCancel(trx: Db, jobIds: readonly number[], now: Date): Promise<void> {
  if (jobIds.length === 0) return;
  await trx
    .updateTable("firm_queue_jobs")
    .set({ cancelled_at: now, updated_at: now })
    .where("id", "in", jobIds)
    .where("cancelled_at", "is", null)
    .execute();
}

/** Record a claimed job whose cancel its worker heard of as ended; `attempted`: it had started. */
export async function markCancelledAttempt(trx: Db, jobId: number, now: Date, attempted: boolean): Promise<void> {
  await trx
    .updateTable("firm_queue_jobs")
    .set((eb) => ({ finished_at: now, updated_at: now, attempts: eb("attempts", "+", attempted ? 1 : 0) }))
    .where("id", "=", jobId)
    .execute();
}

/**
 * The jobs `processId` holds claims on whose cancel was requested: one query per worker, on the
 * claims index, whatever the number of jobs it runs.
 */
export async function cancelledClaimIds(db: Db, processId: number): Promise<number[]> {
  const rows = await db
    .selectFrom("firm_queue_claimed_executions as c")
    .innerJoin("firm_queue_jobs as j", "j.id", "c.job_id")
    .select("c.job_id")
    .where("c.process_id", "=", processId)
    .where("j.cancelled_at", "is not", null)
    .execute();
  return rows.map((row) => Number(row.job_id));
}

/** Up to `limit` ids of unended jobs matching `filter` with an id above `afterId`, in id order. */
export async function unendedJobIds(db: Db, filter: CancelFilter, afterId: number, limit: number): Promise<number[]> {
  let query = db
    .selectFrom("firm_queue_jobs")
    .select("id")
    .where("finished_at", "is", null)
    .where("cancelled_at", "is", null)
    .where("id", ">", afterId);
  if (filter.queue !== undefined) query = query.where("queue_name", "=", filter.queue);
  if (filter.name !== undefined) query = query.where("class_name", "=", filter.name);
  if (filter.key !== undefined) query = query.where("job_key", "=", filter.key);
  const rows = await query.orderBy("id").limit(limit).execute();
  return rows.map((row) => Number(row.id));
}

/** The name and queue of each job among `jobIds` (for telling listeners which jobs were cancelled). */
export async function namesAndQueues(
  db: Db,
  jobIds: readonly number[],
): Promise<Array<{ readonly jobId: number; readonly job: string; readonly queue: string }>> {
  if (jobIds.length === 0) return [];
  const rows = await db
    .selectFrom("firm_queue_jobs")
    .select(["id", "class_name", "queue_name"])
    .where("id", "in", jobIds)
    .orderBy("id")
    .execute();
  return rows.map((row) => ({ jobId: Number(row.id), job: row.class_name, queue: row.queue_name }));
}
