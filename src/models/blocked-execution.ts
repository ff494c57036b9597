import type { Db, Dialect } from "../database/dialect.js";

/** A job waiting for a slot of its concurrency key. */
export interface BlockedJob {
  readonly id: number;
  readonly queueName: string;
  readonly priority: number;
  readonly concurrencyKey: string;
  /** When maintenance may look at it again: `duration` after it was blocked. */
  readonly expiresAt: Date;
}

/** Park jobs until a slot of their key frees up: one multi-row INSERT. */
export async function insertBlockedExecutions(trx: Db, jobs: readonly BlockedJob[], now: Date): Promise<void> {
  if (jobs.length === 0) return;
  await trx
    .insertInto("firm_queue_blocked_executions")
    .values(
      jobs.map((job) => ({
        job_id: job.id,
        queue_name: job.queueName,
        priority: job.priority,
        concurrency_key: job.concurrencyKey,
        expires_at: job.expiresAt,
        created_at: now,
      })),
    )
    .execute();
}

/** The blocked job a freed slot of `key` goes to. */
export interface NextBlocked {
  readonly jobId: number;
  readonly jobName: string;
  readonly queueName: string;
  readonly priority: number;
  /** The budget of the job's own rate limit, or null. */
  readonly rateLimitKey: string | null;
}

/**
 * Lock and return the next blocked job of `key`, by (priority, job id), skipping rows another
 * transaction holds, so two concurrent releases never pick the same job. Null when none.
 */
export async function lockNextBlocked(trx: Db, dialect: Dialect, key: string): Promise<NextBlocked | null> {
  const query = trx
    .selectFrom("firm_queue_blocked_executions")
    .select(["job_id", "queue_name", "priority"])
    .where("concurrency_key", "=", key)
    .orderBy("priority")
    .orderBy("job_id")
    .limit(1);
  const row = await dialect.withSkipLocked(query).executeTakeFirst();
  if (!row) return null;
  const job = await trx
    .selectFrom("firm_queue_jobs")
    .select(["class_name", "rate_limit_key"])
    .where("id", "=", row.job_id)
    .executeTakeFirstOrThrow();
  return {
    jobId: Number(row.job_id),
    jobName: job.class_name,
    queueName: row.queue_name,
    priority: row.priority,
    rateLimitKey: job.rate_limit_key,
  };
}

/** The job leaves blocked executions (it is being promoted). */
export async function deleteBlockedExecution(trx: Db, jobId: number): Promise<void> {
  await trx.deleteFrom("firm_queue_blocked_executions").where("job_id", "=", jobId).execute();
}

/**
 * Up to `limit` keys, after `after` in key order, that have blocked jobs and a free slot: no
 * semaphore row (expired, or never created) or one with value above zero. A plain read; each
 * promotion checks again under locks.
 */
export async function blockedKeysWithFreeSlots(db: Db, after: string | null, limit: number): Promise<string[]> {
  let query = db
    .selectFrom("firm_queue_blocked_executions as b")
    .leftJoin("firm_queue_semaphores as s", "s.key", "b.concurrency_key")
    .select("b.concurrency_key")
    .distinct()
    .where((eb) => eb.or([eb("s.id", "is", null), eb("s.value", ">", 0)]))
    .orderBy("b.concurrency_key")
    .limit(limit);
  if (after !== null) query = query.where("b.concurrency_key", ">", after);
  const rows = await query.execute();
  return rows.map((row) => row.concurrency_key);
}
