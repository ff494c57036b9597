import type { Db, Dialect } from "../database/dialect.js";
import { type ClaimedJob, CLAIMED_JOB_COLUMNS } from "../database/claimed-job.js";
import { ProcessRowGoneError } from "../errors.js";
import { type BudgetRow, lockDueJobBudgets, nextBudgetOpening, setBudgetAvailableAt } from "../models/rate-budget.js";
import { recordStarts, windowUse } from "../models/rate-start.js";
import {
  deleteThrottledExecutions,
  hasThrottledJobs,
  lockThrottledJobs,
  type QueueScope,
} from "../models/throttled-execution.js";
import { QueueRooms } from "./queue-budget-room.js";

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
 * scope) from the ready rows of their queue. A job with its own budget in a limited queue
 * charges both, and starts only when both have room. The claim is the start: the claims are
 * written marked started, and callers start these jobs at once and never buffer them
 * (docs/rate-limits.md).
 */
export async function claimWithinBudgets(
  trx: Db,
  dialect: Dialect,
  scope: QueueScope,
  queues: readonly string[],
  limit: number,
  processId: number,
  /** The database clock (see {@link QueueRooms.open} for when the claim reads it). */
  clock: () => Date,
): Promise<BudgetClaim> {
  let nextOpenAt: Date | null = null;
  const earliest = (at: Date | null) => {
    if (at !== null && (nextOpenAt === null || at < nextOpenAt)) nextOpenAt = at;
  };
  const taken: number[] = [];
  const charged: { key: string; count: number }[] = [];
  const jobBudgets = await lockDueJobBudgets(trx, dialect, clock(), BUDGETS_PER_CLAIM, scope);
  const rooms = await QueueRooms.open(trx, dialect, queues, clock);
  // The claim's time, read once it holds every budget it may take from: its windows end there,
  // its starts are charged there and its claims are marked started then (the claim is the start).
  // Charged later, at the end of the claim, each start would charge its window the claim's whole
  // duration late: a budget kept full by claims would reopen that much later every period, and
  // lose that share of its limit (at a 50 ms claim, 5 % of a 1 s budget).
  const at = rooms.now;
  // The waiting jobs are found through their indexes, however many wait.
  if (jobBudgets.length > 0 || rooms.openBudgets.length > 0) await dialect.readsByIndex?.(trx);
  // Job budgets first: each is bounded by its own limit, so the queue's ready jobs keep their turn.
  for (const budget of jobBudgets) {
    const room = limit - taken.length;
    const ids = room > 0 ? await takeWithinJobBudget(trx, dialect, budget, scope, room, rooms, at) : null;
    if (ids === null) continue;
    taken.push(...ids.jobIds);
    if (ids.jobIds.length > 0) charged.push({ key: budget.key, count: ids.jobIds.length });
    earliest(ids.full);
  }
  for (const budget of rooms.openBudgets) {
    const room = Math.min(limit - taken.length, rooms.free(budget.queueName!));
    const ids = room > 0 ? await lockReadyOfQueue(trx, dialect, budget.queueName!, room) : [];
    for (const _ of ids) rooms.take(budget.queueName!);
    if (ids.length > 0) await trx.deleteFrom("firm_queue_ready_executions").where("job_id", "in", ids).execute();
    taken.push(...ids);
  }
  earliest(rooms.reopening());
  await rooms.settle(trx);
  charged.push(...rooms.charges());
  if (taken.length < limit) earliest(await nextBudgetOpening(trx, queues, at));
  if (taken.length === 0) return { jobs: [], nextOpenAt };
  // Only a registered process may claim (see claimReadyExecutions): checked once something was taken.
  const self = await dialect
    .withShareLock(trx.selectFrom("firm_queue_processes").select("id").where("id", "=", processId))
    .executeTakeFirst();
  if (!self) throw new ProcessRowGoneError(processId);
  // Marked started in the claim: these jobs start the moment it commits.
  await trx
    .insertInto("firm_queue_claimed_executions")
    .values(taken.map((jobId) => ({ job_id: jobId, process_id: processId, created_at: at, started_at: at })))
    .execute();
  const rows = await trx
    .selectFrom("firm_queue_jobs")
    .select([...CLAIMED_JOB_COLUMNS])
    .where("id", "in", taken)
    .execute();
  const jobs: ClaimedJob[] = rows.map((row) => ({ ...row, claim_started: true }));
  for (const { key, count } of charged) await recordStarts(trx, key, count, at);
  const order = new Map(taken.map((id, index) => [id, index]));
  jobs.sort((a, b) => order.get(Number(a.id))! - order.get(Number(b.id))!);
  return { jobs, nextOpenAt };
}

/**
 * One job budget's share of a claim: prune its start log, count the window, take what fits (in
 * queues that have room: see {@link QueueRooms}), and set when the budget is next worth a look.
 * `full` is when it opens again if it is full or closed now.
 */
async function takeWithinJobBudget(
  trx: Db,
  dialect: Dialect,
  budget: BudgetRow,
  scope: QueueScope,
  room: number,
  rooms: QueueRooms,
  now: Date,
): Promise<{ jobIds: number[]; full: Date | null }> {
  // The starts are written by the caller, at the end of the claim.
  if (budget.closedUntil !== null && budget.closedUntil > now) {
    await setBudgetAvailableAt(trx, budget.key, budget.closedUntil);
    return { jobIds: [], full: budget.closedUntil };
  }
  const use = await windowUse(trx, budget.key, new Date(now.getTime() - budget.periodMs));
  const wanted = Math.min(budget.limit - use.used, room);
  const jobIds = await lockWithinQueueRoom(trx, dialect, budget.key, scope, wanted, rooms);
  if (jobIds.length > 0) await deleteThrottledExecutions(trx, jobIds);
  const nowFull = use.used + jobIds.length >= budget.limit;
  // The window frees its first start when the oldest start in it leaves: that one, or this claim's.
  const opensAt = nowFull ? new Date((use.oldest ?? now).getTime() + budget.periodMs) : null;
  if (opensAt !== null) {
    await setBudgetAvailableAt(trx, budget.key, opensAt);
  } else if (jobIds.length === wanted) {
    // It has room left and took all it was asked for: more may wait, and its `available_at`
    // (due now, or it would not have been locked) stays as it is.
  } else if (!(await hasThrottledJobs(trx, budget.key, rooms.full()))) {
    // Nothing left it could start now: none waits, or only in queues that are full until later.
    const blocked = rooms.full().length > 0 && (await hasThrottledJobs(trx, budget.key));
    if (!blocked) await setBudgetAvailableAt(trx, budget.key, null);
    else {
      const reopening = rooms.reopening();
      if (reopening !== null) await setBudgetAvailableAt(trx, budget.key, reopening);
    }
  }
  return { jobIds, full: opensAt };
}

/**
 * Up to `wanted` waiting jobs of a job budget, locked, in (priority, job id) order, each charged
 * to its queue's room: a job whose queue has no room is passed over for the next.
 */
async function lockWithinQueueRoom(
  trx: Db,
  dialect: Dialect,
  budgetKey: string,
  scope: QueueScope,
  wanted: number,
  rooms: QueueRooms,
): Promise<number[]> {
  const jobIds: number[] = [];
  while (jobIds.length < wanted) {
    const want = wanted - jobIds.length;
    const rows = await lockThrottledJobs(trx, dialect, budgetKey, scope, want, { queues: rooms.full(), jobIds });
    let passedOver = false;
    for (const row of rows) {
      if (jobIds.length < wanted && rooms.take(row.queueName)) jobIds.push(row.jobId);
      else passedOver = true;
    }
    // Fewer than asked for: there are no more. All taken: asked again only for what is missing.
    if (!passedOver || rows.length === 0) break;
  }
  return jobIds;
}

/** The ready jobs of a queue, in (priority, job id) order, locked. */
async function lockReadyOfQueue(trx: Db, dialect: Dialect, queue: string, limit: number): Promise<number[]> {
  const query = trx
    .selectFrom("firm_queue_ready_executions")
    .select("job_id")
    .where("queue_name", "=", queue)
    .where("queue_name", "not in", trx.selectFrom("firm_queue_pauses").select("queue_name"))
    .orderBy("priority")
    .orderBy("job_id")
    .limit(limit);
  return (await dialect.withSkipLocked(query).execute()).map((row) => Number(row.job_id));
}
