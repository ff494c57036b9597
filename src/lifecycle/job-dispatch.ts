import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { insertBlockedExecutions } from "../models/blocked-execution.js";
import { admitThroughSemaphores } from "./concurrency-admission.js";
import type { DispatchContext } from "./dispatch-context.js";
import { deleteJobs, type DispatchableJob, type JobRow } from "../models/job.js";
import { insertReadyExecutions } from "../models/ready-execution.js";
import { releaseJobKeys } from "../models/job-key.js";
import { insertScheduledExecutions } from "../models/scheduled-execution.js";
import { recordSemaphoreIds } from "../models/semaphore.js";
import { type BudgetDefinition, ensureBudgets, markBudgetsWaiting } from "../models/rate-budget.js";
import { insertThrottledExecutions } from "../models/throttled-execution.js";

export type { DispatchContext } from "./dispatch-context.js";
export { dispatchContext } from "./dispatch-context.js";

/** Where dispatched jobs went. */
export interface DispatchCounts {
  ready: number;
  scheduled: number;
  blocked: number;
  /**
   * Ids of jobs dropped because their key had no free slot and their definition discards on
   * conflict. Their rows are deleted in the same transaction.
   */
  discarded: number[];
}

/**
 * Put jobs where they belong now. The single place that decides a job's next state, used by
 * enqueue, the dispatcher and every path that puts a job back in line:
 * - a job due later waits in scheduled executions (its limit is checked when it comes due);
 * - a due job without a concurrency key becomes ready;
 * - a due job with a key becomes ready only if it takes a slot of its key's semaphore;
 *   otherwise it is blocked (or, if its definition says so, discarded and deleted).
 *
 * `context` carries the dialect and the concurrency limits of the job definitions this process
 * knows (see `dispatchContext(database, concurrency)`). Runs inside the caller's transaction.
 */
export async function dispatchJobs(
  trx: Db,
  jobs: readonly DispatchableJob[],
  now: Date,
  context: DispatchContext,
): Promise<DispatchCounts> {
  const later = jobs.filter((job) => job.scheduledAt.getTime() > now.getTime());
  const due = jobs.filter((job) => job.scheduledAt.getTime() <= now.getTime());
  const unlimited = due.filter((job) => job.concurrencyKey === null);
  const limited = due.filter((job) => job.concurrencyKey !== null);
  await insertScheduledExecutions(trx, later, now);
  const admission =
    limited.length > 0
      ? await admitThroughSemaphores(trx, limited, now, context)
      : { ready: [], blocked: [], discarded: [] };
  await routeReady(trx, [...unlimited, ...admission.ready], jobs, now, context);
  if (admission.ready.length > 0) await recordSemaphoreIds(trx, admission.ready);
  await insertBlockedExecutions(trx, admission.blocked, now);
  const discarded = admission.discarded.map((job) => job.id);
  if (discarded.length > 0) {
    await deleteJobs(trx, discarded);
    await releaseJobKeys(trx, discarded, now);
    context.policies.logger.info("jobs discarded: their concurrency key had no free slot", {
      jobIds: discarded,
      keys: [...new Set(admission.discarded.map((job) => job.concurrencyKey))],
    });
  }
  if (context.moves !== undefined && admission.blocked.length > 0) {
    const names = new Map(limited.map((job) => [job.id, job.className]));
    for (const { id, queueName, concurrencyKey } of admission.blocked)
      context.moves.noteBlocked({ jobId: id, job: names.get(id)!, queue: queueName, concurrencyKey });
  }
  if (admission.blocked.length > 0) {
    context.policies.logger.debug("jobs blocked until a slot of their concurrency key frees up", {
      jobIds: admission.blocked.map((job) => job.id),
    });
  }
  return {
    ready: unlimited.length + admission.ready.length,
    scheduled: later.length,
    blocked: admission.blocked.length,
    discarded,
  };
}

/**
 * Due jobs that may start as far as concurrency goes: ready, or, for a job with its own rate
 * limit, waiting for its budget in the throttled table (never in the ready table, so the ordinary
 * claim never meets them). The budgets of every job of the call with a rate limit get their row
 * (scheduled ones too, so a dispatcher that does not know the definition still has the limit).
 */
async function routeReady(
  trx: Db,
  due: readonly DispatchableJob[],
  all: readonly DispatchableJob[],
  now: Date,
  context: DispatchContext,
): Promise<void> {
  if (!all.some((job) => job.rateLimitKey)) {
    await insertReadyExecutions(trx, due, now, context.dialect.bulkInsert);
    return;
  }
  const throttled = due.filter((job) => job.rateLimitKey);
  await insertReadyExecutions(
    trx,
    due.filter((job) => !job.rateLimitKey),
    now,
    context.dialect.bulkInsert,
  );
  const definitions = new Map<string, BudgetDefinition>();
  for (const job of all) {
    const limit = job.rateLimitKey ? context.policies.rateLimitFor(job.className) : null;
    if (limit !== null) definitions.set(job.rateLimitKey!, { key: job.rateLimitKey!, ...limit });
  }
  const waiting = new Set(throttled.map((job) => job.rateLimitKey!));
  await ensureBudgets(trx, context.dialect, [...definitions.values()], waiting, now);
  await markBudgetsWaiting(
    trx,
    [...waiting].filter((key) => !definitions.has(key)),
    now,
  );
  for (const job of throttled) {
    context.moves?.noteRateLimited({
      jobId: job.id,
      job: job.className,
      queue: job.queueName,
      budget: job.rateLimitKey!,
      mayStartAt: null,
    });
  }
  await insertThrottledExecutions(
    trx,
    throttled.map((job) => ({
      id: job.id,
      queueName: job.queueName,
      priority: job.priority,
      budgetKey: job.rateLimitKey!,
    })),
    now,
  );
}

/**
 * Dispatch jobs already in the database by id, as due now, in the order given (the
 * dispatcher, releases, retries).
 */
export async function dispatchStoredJobsNow(
  trx: Db,
  jobIds: readonly number[],
  now: Date,
  context: DispatchContext,
): Promise<DispatchCounts> {
  if (jobIds.length === 0) return { ready: 0, scheduled: 0, blocked: 0, discarded: [] };
  const rows = await trx.selectFrom("firm_queue_jobs").selectAll().where("id", "in", jobIds).execute();
  const position = new Map(jobIds.map((id, index) => [id, index]));
  rows.sort((a, b) => position.get(Number(a.id))! - position.get(Number(b.id))!);
  return dispatchJobs(
    trx,
    rows.map((row) => ({ ...toDispatchable(row), scheduledAt: now })),
    now,
    context,
  );
}

/** What dispatching needs of a jobs row. */
export function toDispatchable(row: JobRow): DispatchableJob {
  return {
    id: Number(row.id),
    className: row.class_name,
    queueName: row.queue_name,
    priority: row.priority,
    scheduledAt: toDate(row.scheduled_at) ?? new Date(0),
    concurrencyKey: row.concurrency_key,
    rateLimitKey: row.rate_limit_key,
  };
}
