import type { Db } from "../database/dialect.js";
import { deleteBlockedExecution, lockNextBlocked } from "../models/blocked-execution.js";
import type { DispatchContext } from "./dispatch-context.js";
import { insertReadyExecutions } from "../models/ready-execution.js";
import { waitForBudget } from "./budget-wait.js";
import { acquireSemaphore, recordSemaphoreIds, releaseSemaphore } from "../models/semaphore.js";

/** A job that may hold a concurrency slot: its name (for the limit) and its stored key. */
export interface SlotHolder {
  readonly jobName: string;
  readonly concurrencyKey: string | null;
  /** The semaphore row the slot came from (`firm_queue_jobs.semaphore_id`); absent or null: any row of the key. */
  readonly semaphoreId?: number | null;
}

/** What {@link slotHolderOf} reads of a job row. */
export interface SlotHolderRow {
  readonly class_name: string;
  readonly concurrency_key: string | null;
  /** A BIGINT column: some drivers hand it back as a string. */
  readonly semaphore_id: number | string | null;
}

/** The slot a job row may hold, named as its release must name it. */
export function slotHolderOf(row: SlotHolderRow): SlotHolder {
  return {
    jobName: row.class_name,
    concurrencyKey: row.concurrency_key,
    semaphoreId: row.semaphore_id === null ? null : Number(row.semaphore_id),
  };
}

/**
 * A job that held a slot of its key is done with it: give the slot back and promote the next
 * blocked job of that key (priority, then job id) through the semaphore. Call it in the same
 * transaction that ends the attempt: finishing, failing (a failed attempt that will be retried
 * too: the retry takes a slot again when it is dispatched), discarding a ready or claimed job,
 * recovering a crashed process's claim. A job without a key is left alone. Returns the id of
 * the job promoted, or null.
 */
export async function releaseSemaphoreAndPromote(
  trx: Db,
  context: DispatchContext,
  job: SlotHolder,
  now: Date,
): Promise<number | null> {
  if (job.concurrencyKey === null) return null;
  const limit = context.policies.limitFor(job.jobName, job.concurrencyKey);
  await releaseSemaphore(trx, job.concurrencyKey, limit, now, job.semaphoreId ?? null);
  return promoteNextBlocked(trx, context, job.concurrencyKey, now);
}

/**
 * Move the next blocked job of `key` to ready if it can take a slot (the seed's promoteOne).
 * The job is locked with SKIP LOCKED first, so two concurrent promotions never pick the same
 * one, then it acquires the semaphore like any other job: a promotion never goes around the
 * limit. Returns the promoted job's id, or null when nothing was blocked or no slot was free.
 */
export async function promoteNextBlocked(
  trx: Db,
  context: DispatchContext,
  key: string,
  now: Date,
): Promise<number | null> {
  const next = await lockNextBlocked(trx, context.dialect, key);
  if (next === null) return null;
  const limit = context.policies.limitFor(next.jobName, key);
  const semaphoreId = await acquireSemaphore(trx, context.dialect, key, limit, now);
  if (semaphoreId === null) return null;
  await recordSemaphoreIds(trx, [{ id: next.jobId, semaphoreId }]);
  await deleteBlockedExecution(trx, next.jobId);
  const promoted = { id: next.jobId, queueName: next.queueName, priority: next.priority };
  if (next.rateLimitKey === null) await insertReadyExecutions(trx, [promoted], now);
  else await waitForBudget(trx, [{ ...promoted, budgetKey: next.rateLimitKey }], now);
  context.moves?.noteUnblocked({ jobId: next.jobId, job: next.jobName, queue: next.queueName, concurrencyKey: key });
  if (next.rateLimitKey !== null) {
    const held = { jobId: next.jobId, job: next.jobName, queue: next.queueName };
    context.moves?.noteRateLimited({ ...held, budget: next.rateLimitKey, mayStartAt: null });
  }
  return next.jobId;
}

/**
 * Jobs going back in line while holding their slots (a claim released on shutdown) give the
 * slots back without promoting anyone: the caller dispatches them again in this transaction,
 * and they take their slots again through the semaphore, keeping their place.
 */
export async function releaseSemaphoresForRequeue(
  trx: Db,
  context: DispatchContext,
  jobs: readonly SlotHolder[],
  now: Date,
): Promise<void> {
  for (const job of sortedByKey(jobs)) {
    const limit = context.policies.limitFor(job.jobName, job.concurrencyKey!);
    await releaseSemaphore(trx, job.concurrencyKey!, limit, now, job.semaphoreId ?? null);
  }
}

/** Keyed jobs only, in key order: transactions lock semaphores in one order, so they cannot deadlock on them. */
function sortedByKey(jobs: readonly SlotHolder[]): SlotHolder[] {
  return jobs
    .filter((job) => job.concurrencyKey !== null)
    .sort((a, b) => compareKeys(a.concurrencyKey!, b.concurrencyKey!));
}

/** Code-unit order of keys, the same in every process whatever the database collation. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
