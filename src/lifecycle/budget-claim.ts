import type { Db, Dialect } from "../database/dialect.js";
import { type ClaimedJob, CLAIMED_JOB_COLUMNS } from "../database/claimed-job.js";
import { ProcessRowGoneError } from "../errors.js";
import {
  type BudgetRow,
  lockDueJobBudgets,
  lockOpenQueueBudgets,
  nextBudgetOpening,
  setBudgetAvailableAt,
} from "../models/rate-budget.js";
import { pruneStarts, recordStarts, windowUse } from "../models/rate-start.js";
import {
  deleteThrottledExecutions,
  hasThrottledJobs,
  lockThrottledJobs,
  type QueueScope,
} from "../models/throttled-execution.js";

/** Job budgets looked at per claim: enough to fill a worker's slots from several keys. */
const BUDGETS_PER_CLAIM = 16;

/** What a budget claim took, and when it is worth claiming again. */
export interface BudgetClaim {
  readonly jobs: ClaimedJob[];
  /** The earliest time a budget it saw full or closed opens again (null: none seen). */
  readonly nextOpenAt: Date | null;
}

/**
 * Claim up to `limit` jobs that wait for a rate-limit budget, inside the caller's claim
 * transaction: lock the budgets that may start jobs now (skipping those another claimer holds,
 * which is what serializes one budget's claimers across hosts), and from each take at most what
 * its sliding window has room for, recording the starts in the same transaction. Job budgets
 * take from the throttled table; queue budgets (`queues`: the limited queues in the worker's
 * scope) from the ready rows of their queue. The claim is the start: callers start these jobs at
 * once and never buffer them (docs/rate-limits.md).
 */
export async function claimWithinBudgets(
  trx: Db,
  dialect: Dialect,
  scope: QueueScope,
  queues: readonly string[],
  limit: number,
  processId: number,
  /** The database clock: read after the locks are held, so a start is charged as late as it can be. */
  clock: () => Date,
): Promise<BudgetClaim> {
  let now = clock();
  let nextOpenAt: Date | null = null;
  const earliest = (at: Date | null) => {
    if (at !== null && (nextOpenAt === null || at < nextOpenAt)) nextOpenAt = at;
  };
  const taken: number[] = [];
  const charged: { key: string; count: number }[] = [];
  const budgets = [
    ...(await lockOpenQueueBudgets(trx, dialect, queues, now)),
    ...(await lockDueJobBudgets(trx, dialect, now, BUDGETS_PER_CLAIM, scope)),
  ];
  // The locks may have taken a while (a new connection, a claimer ahead): windows are counted from now.
  now = clock();
  for (const budget of budgets) {
    const room = limit - taken.length;
    const ids =
      room > 0 ? await takeWithinBudget(trx, dialect, budget, scope, room, clock) : { jobIds: [], full: null };
    taken.push(...ids.jobIds);
    if (ids.jobIds.length > 0) charged.push({ key: budget.key, count: ids.jobIds.length });
    earliest(ids.full);
  }
  if (taken.length < limit) earliest(await nextBudgetOpening(trx, queues, clock()));
  if (taken.length === 0) return { jobs: [], nextOpenAt };
  // Only a registered process may claim (see claimReadyExecutions): checked once something was taken.
  const self = await dialect
    .withShareLock(trx.selectFrom("firm_queue_processes").select("id").where("id", "=", processId))
    .executeTakeFirst();
  if (!self) throw new ProcessRowGoneError(processId);
  await trx
    .insertInto("firm_queue_claimed_executions")
    .values(taken.map((jobId) => ({ job_id: jobId, process_id: processId, created_at: clock() })))
    .execute();
  const jobs = await trx
    .selectFrom("firm_queue_jobs")
    .select([...CLAIMED_JOB_COLUMNS])
    .where("id", "in", taken)
    .execute();
  // Charged at the latest moment before the commit (the handlers start right after it): a time
  // later than the real start only makes the next window of the budget wait a little longer.
  const startedAt = clock();
  for (const { key, count } of charged) await recordStarts(trx, key, count, startedAt);
  const order = new Map(taken.map((id, index) => [id, index]));
  jobs.sort((a, b) => order.get(Number(a.id))! - order.get(Number(b.id))!);
  return { jobs, nextOpenAt };
}

/**
 * One budget's share of a claim: prune its start log, count the window, take what fits, record
 * the starts and set when the budget is next worth a look. `full` is when it opens again if it
 * is full or closed now.
 */
async function takeWithinBudget(
  trx: Db,
  dialect: Dialect,
  budget: BudgetRow,
  scope: QueueScope,
  room: number,
  clock: () => Date,
): Promise<{ jobIds: number[]; full: Date | null }> {
  const now = clock();
  // The starts are written by the caller, at the end of the claim.
  if (budget.closedUntil !== null && budget.closedUntil > now) {
    await setBudgetAvailableAt(trx, budget.key, budget.closedUntil);
    return { jobIds: [], full: budget.closedUntil };
  }
  const windowStart = new Date(now.getTime() - budget.periodMs);
  await pruneStarts(trx, budget.key, windowStart);
  const use = await windowUse(trx, budget.key, windowStart);
  const free = budget.limit - use.used;
  const jobIds = free > 0 ? await lockWaiting(trx, dialect, budget, scope, Math.min(free, room)) : [];
  if (jobIds.length > 0) {
    if (budget.queueName === null) await deleteThrottledExecutions(trx, jobIds);
    else await trx.deleteFrom("firm_queue_ready_executions").where("job_id", "in", jobIds).execute();
  }
  const nowFull = use.used + jobIds.length >= budget.limit;
  // The window frees its first start when the oldest start in it leaves: that one, or this claim's.
  const opensAt = nowFull ? new Date((use.oldest ?? now).getTime() + budget.periodMs) : null;
  if (budget.queueName !== null) {
    // A queue budget's time says only "full until": its jobs are ordinary ready rows.
    await setBudgetAvailableAt(trx, budget.key, opensAt);
  } else if (opensAt !== null) {
    await setBudgetAvailableAt(trx, budget.key, opensAt);
  } else if (!(await hasThrottledJobs(trx, budget.key))) {
    await setBudgetAvailableAt(trx, budget.key, null);
  }
  return { jobIds, full: opensAt };
}

/** The waiting jobs of a budget, in (priority, job id) order, locked. */
async function lockWaiting(
  trx: Db,
  dialect: Dialect,
  budget: BudgetRow,
  scope: QueueScope,
  limit: number,
): Promise<number[]> {
  if (budget.queueName === null) return lockThrottledJobs(trx, dialect, budget.key, scope, limit);
  const query = trx
    .selectFrom("firm_queue_ready_executions")
    .select("job_id")
    .where("queue_name", "=", budget.queueName)
    .where("queue_name", "not in", trx.selectFrom("firm_queue_pauses").select("queue_name"))
    .orderBy("priority")
    .orderBy("job_id")
    .limit(limit);
  return (await dialect.withSkipLocked(query).execute()).map((row) => Number(row.job_id));
}
