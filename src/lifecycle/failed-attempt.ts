import type { Db } from "../database/dialect.js";
import { JobNotFoundError } from "../errors.js";
import { decideAfterFailure, type FailureDecision } from "../definitions/retry-decision.js";
import type { DispatchContext } from "./dispatch-context.js";
import { describeError, insertFailedExecution } from "../models/failed-execution.js";
import { dispatchJobs, toDispatchable } from "./job-dispatch.js";
import { recordAttemptFailure } from "../models/job.js";
import { releaseJobKeys } from "../models/job-key.js";
import { releaseSemaphoreAndPromote, slotHolderOf } from "./semaphore-release.js";
import { releaseDependents } from "./dependency-release.js";

/** What became of a job after a failed attempt, for the caller to log. */
export interface FailedAttemptOutcome {
  readonly jobId: number;
  readonly name: string;
  readonly queue: string;
  /** The attempt that failed: 1 for the first. Also the job's `attempts` count now. */
  readonly attempt: number;
  /** Attempts the job's retry policy allows in total. */
  readonly maxAttempts: number;
  readonly decision: FailureDecision;
  /** When the retry is due, for a retried job. */
  readonly retryAt?: Date;
  /** The job's cancel was requested while it ran: it ended cancelled, whatever the decision said. */
  readonly cancelled?: boolean;
}

/**
 * The one place a failed attempt is recorded, whatever failed it: a handler error, a timeout, an
 * unknown job, unreadable arguments, or (crash recovery) a process that died holding the claim.
 * The caller has already removed the job's claim in this transaction. The attempt is counted, its
 * error kept as the job's last error, the concurrency slot it held goes to the next blocked job of
 * its key, and the job's retry policy (from its definition; none known here means one attempt)
 * decides what follows:
 * - retry: the same job row is dispatched again for now + the backoff delay (taking a slot again,
 *   through the semaphore, when it is due);
 * - fail: the job moves to failed executions with this error;
 * - abandon (`abandonOn` matched): the job is recorded as finished, its error kept as last error.
 * Pass the thrown value itself as `error`, so `retryOn`/`abandonOn` can test it with `instanceof`.
 * `keepSlot` leaves the concurrency slot held: the attempt is over but its handler still runs.
 */
export async function recordFailedAttempt(
  trx: Db,
  jobId: number,
  error: unknown,
  now: Date,
  context: DispatchContext,
  options: { readonly keepSlot?: boolean } = {},
): Promise<FailedAttemptOutcome> {
  const row = await trx.selectFrom("firm_queue_jobs").selectAll().where("id", "=", jobId).executeTakeFirst();
  if (!row) throw new JobNotFoundError(jobId);
  const policy = context.policies.retryPolicyFor(row.class_name);
  const attempt = row.attempts + 1;
  const decision = decideAfterFailure(policy, attempt, error);
  const errorJson = JSON.stringify(describeError(error));
  const job = toDispatchable(row);
  const outcome = {
    jobId,
    name: row.class_name,
    queue: row.queue_name,
    attempt,
    maxAttempts: policy.attempts,
    decision,
  };

  // A timed-out handler still running keeps its slot until it ends (see releaseSlotOf).
  if (!options.keepSlot) await releaseSemaphoreAndPromote(trx, context, slotHolderOf(row), now);

  if (row.cancelled_at !== null) {
    // Cancelled while it ran: whatever failed it, the job ends cancelled and is not retried.
    await recordAttemptFailure(trx, jobId, errorJson, now, { finishedAt: now });
    await releaseJobKeys(trx, [jobId], now);
    await releaseDependents(trx, context, [jobId], "cancelled", now);
    return { ...outcome, decision: { action: "abandon" }, cancelled: true };
  }
  if (decision.action === "retry") {
    const retryAt = new Date(now.getTime() + decision.delayMs);
    await recordAttemptFailure(trx, jobId, errorJson, now, { scheduledAt: retryAt });
    await dispatchJobs(trx, [{ ...job, scheduledAt: retryAt }], now, context);
    return { ...outcome, retryAt };
  }
  // The job ends here: its unique key, if any, is free again.
  await releaseJobKeys(trx, [jobId], now);
  if (decision.action === "abandon") {
    await recordAttemptFailure(trx, jobId, errorJson, now, { finishedAt: now });
  } else {
    await recordAttemptFailure(trx, jobId, errorJson, now);
    await insertFailedExecution(trx, jobId, errorJson, now);
  }
  // Its dependents learn it failed (an abandoned job did not succeed either). The edges are read
  // after the UPDATE above took the job's row lock, so a dependent added meanwhile is among them.
  await releaseDependents(trx, context, [jobId], "failed", now);
  return outcome;
}
