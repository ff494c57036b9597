import { sql } from "kysely";
import { ProcessRowGoneError } from "../errors.js";
import type { BulkInsert, Db, Dialect } from "../database/dialect.js";
import { type ClaimedJob, CLAIMED_JOB_COLUMNS } from "../database/claimed-job.js";
import type { ReadyJob } from "../database/insert-rows.js";
import { noteReadyWritten } from "../database/ready-writes.js";

export type { ReadyJob } from "../database/insert-rows.js";

/**
 * One claim query's scope: a single queue, or every queue except some. Paused queues are always
 * excluded by the claim itself.
 */
export interface ClaimTarget {
  readonly queue?: string;
  readonly exclude: readonly string[];
}

/** Rows per INSERT: keeps every database under its bound-parameter limit (SQLite's is 32,766). */
const INSERT_CHUNK = 1000;

/**
 * Make jobs ready to be claimed: one multi-row INSERT per 1000 jobs, or the dialect's one statement
 * (`bulk`). The transaction is noted as having made jobs ready: once it commits, this process's
 * waiting workers are woken (see ready-writes.ts).
 */
export async function insertReadyExecutions(
  trx: Db,
  jobs: readonly ReadyJob[],
  now: Date,
  bulk?: BulkInsert,
): Promise<void> {
  if (jobs.length === 0) return;
  noteReadyWritten(trx);
  if (bulk !== undefined && jobs.length > 1) return bulk.ready(trx, jobs, now);
  for (let start = 0; start < jobs.length; start += INSERT_CHUNK)
    await trx
      .insertInto("firm_queue_ready_executions")
      .values(
        jobs
          .slice(start, start + INSERT_CHUNK)
          .map((job) => ({ job_id: job.id, queue_name: job.queueName, priority: job.priority, created_at: now })),
      )
      .execute();
}

/**
 * Claim up to `limit` ready jobs of one target for `processId`, in (priority, job id) order, inside
 * the caller's claim transaction: select the ready rows with their jobs (skipping rows other
 * claimers hold), record the claims, delete the ready rows. Paused queues are never claimed. Returns the claimed
 * jobs (the columns running them reads), in claim order: reading them in the same SELECT saves a round trip per claim.
 * The first `startNow` claims (those for free slots) are written marked started and come back
 * with `claim_started` true.
 */
export async function claimReadyExecutions(
  trx: Db,
  dialect: Dialect,
  target: ClaimTarget,
  limit: number,
  processId: number,
  now: Date,
  startNow = 0,
): Promise<ClaimedJob[]> {
  let query = trx
    .selectFrom("firm_queue_ready_executions as r")
    .innerJoin("firm_queue_jobs as j", "j.id", "r.job_id")
    .select(CLAIMED_JOB_COLUMNS.map((column) => `j.${column}` as const))
    .where("r.queue_name", "not in", trx.selectFrom("firm_queue_pauses").select("queue_name"))
    .orderBy("r.priority")
    .orderBy("r.job_id")
    .limit(limit);
  if (target.queue !== undefined) query = query.where("r.queue_name", "=", target.queue);
  if (target.exclude.length > 0) query = query.where("r.queue_name", "not in", target.exclude);
  const jobs = await dialect.withSkipLocked(query).execute();
  if (jobs.length === 0) return [];
  // Only a registered process may claim, and its row may not be pruned until this commits:
  // otherwise the pruner could fail these claims as orphans while their handlers run here.
  // Checked once there is something to claim, so an empty poll holds no lock on the row.
  const self = await dialect
    .withShareLock(trx.selectFrom("firm_queue_processes").select("id").where("id", "=", processId))
    .executeTakeFirst();
  if (!self) throw new ProcessRowGoneError(processId);
  const jobIds = jobs.map((job) => Number(job.id));
  await trx
    .insertInto("firm_queue_claimed_executions")
    .values(
      jobIds.map((jobId, at) => ({
        job_id: jobId,
        process_id: processId,
        created_at: now,
        started_at: at < startNow ? now : null,
      })),
    )
    .execute();
  await trx.deleteFrom("firm_queue_ready_executions").where("job_id", "in", jobIds).execute();
  return jobs.map((job, at) => ({ ...job, claim_started: at < startNow }));
}

/** Names of queues that have ready jobs and start with `prefix`, in name (code unit) order. */
export async function readyQueueNamesWithPrefix(db: Db, prefix: string): Promise<string[]> {
  const pattern = `${prefix.replace(/[!%_]/g, (char) => `!${char}`)}%`;
  const rows = await db
    .selectFrom("firm_queue_ready_executions")
    .select("queue_name")
    .distinct()
    .where(sql<boolean>`queue_name LIKE ${pattern} ESCAPE '!'`)
    .execute();
  // SQLite's LIKE ignores ASCII case and collations sort differently per database: filter and
  // sort here so every database selects the same queues in the same order.
  return rows
    .map((row) => row.queue_name)
    .filter((name) => name.startsWith(prefix))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
