import type { Database } from "../database/connection.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { queueBudgetKey } from "../definitions/rate-limit-options.js";
import { describeError } from "../models/failed-execution.js";
import { recordLastError } from "../models/job.js";
import { budgetExists, closeBudget, queueBudgetOf } from "../models/rate-budget.js";
import { dispatchContext } from "./dispatch-context.js";
import { dispatchJobs, toDispatchable } from "./job-dispatch.js";
import { JobMoves } from "./job-moves.js";
import { requeueLockedClaims } from "./claimed-jobs.js";
import { releaseSemaphoresForRequeue, slotHolderOf } from "./semaphore-release.js";

/** What became of a job whose handler threw a RateLimitedError. */
export interface RateLimitedOutcome {
  readonly jobId: number;
  readonly name: string;
  readonly queue: string;
  /** The budget closed; null when the job has no budget (no limit of its own, none on its queue). */
  readonly budget: string | null;
  /** Until when the budget is closed (or, without a budget, when the job is due again). */
  readonly until: Date;
  /** The attempt the handler made (not counted). */
  readonly attempt: number;
}

/**
 * A handler said the remote service rate limited it: put the job back to waiting with no attempt
 * counted and close its budget for `retryInMs` on every host, in one transaction, if
 * `processId` still holds the claim (the stale-worker guard; null otherwise, nothing changed).
 * The budget is the job's own (`job:<group>` or `job:<group>/<key>`), else its queue's. A job
 * with neither has no budget to close: it alone waits out `retryInMs` as a scheduled job. The
 * job's last error says it was rate limited, which budget closed and until when.
 */
export async function releaseRateLimited(
  database: Database,
  policies: JobPolicies,
  jobId: number,
  processId: number,
  error: unknown,
  retryInMs: number,
): Promise<RateLimitedOutcome | null> {
  const moves = JobMoves.for(policies.events);
  const outcome = await database.claimTransaction(async (trx): Promise<RateLimitedOutcome | null> => {
    moves?.reset();
    const claim = await database.dialect
      .withSkipLocked(
        trx
          .selectFrom("firm_queue_claimed_executions")
          .select("job_id")
          .where("job_id", "=", jobId)
          .where("process_id", "=", processId),
      )
      .executeTakeFirst();
    if (claim === undefined) return null;
    const row = await trx.selectFrom("firm_queue_jobs").selectAll().where("id", "=", jobId).executeTakeFirst();
    if (row === undefined) return null;
    const now = database.clock.now();
    const until = new Date(now.getTime() + retryInMs);
    let budget = row.rate_limit_key;
    if (budget !== null && !(await budgetExists(trx, budget))) budget = null;
    if (budget === null && (await queueBudgetOf(trx, row.queue_name)) !== null) budget = queueBudgetKey(row.queue_name);
    const stored = describeError(error);
    const why =
      budget === null
        ? `no budget to close (no rate limit on the job or its queue): the job waits until ${until.toISOString()}`
        : `budget ${budget} closed until ${until.toISOString()}`;
    const lastError = JSON.stringify({ ...stored, message: `${stored.message}; ${why}; no attempt counted` });
    const context = dispatchContext(database, policies, moves);
    if (budget === null && row.cancelled_at === null) {
      await recordLastError(trx, jobId, lastError, now, until);
      await trx.deleteFrom("firm_queue_claimed_executions").where("job_id", "=", jobId).execute();
      await releaseSemaphoresForRequeue(trx, context, [slotHolderOf(row)], now);
      await dispatchJobs(trx, [{ ...toDispatchable(row), scheduledAt: until }], now, context);
    } else {
      await recordLastError(trx, jobId, lastError, now);
      // A job whose cancel was requested ends cancelled here instead.
      await requeueLockedClaims(trx, database, policies, [jobId]);
      // After the requeue, which marks the budget as having a waiting job from now on.
      if (budget !== null) await closeBudget(trx, budget, until, now);
    }
    return { jobId, name: row.class_name, queue: row.queue_name, budget, until, attempt: row.attempts + 1 };
  });
  moves?.emit(policies.events);
  if (outcome !== null && policies.events.has("job.rateLimited")) {
    const { jobId: id, name, queue, budget, until, attempt } = outcome;
    policies.events.emit("job.rateLimited", {
      jobId: id,
      job: name,
      queue,
      budget,
      mayStartAt: until,
      error,
      attempt,
      processId,
    });
  }
  return outcome;
}
