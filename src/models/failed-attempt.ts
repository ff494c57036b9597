import type { Db } from "../database/dialect.js";
import { JobNotFoundError } from "../errors.js";
import type { DefinitionLookup } from "../job-registry.js";
import { decideAfterFailure, type FailureDecision } from "../retry-decision.js";
import { NO_RETRY } from "../retry-policy.js";
import { describeError, insertFailedExecution } from "./failed-execution.js";
import { dispatchJobs, toDispatchable } from "./job-dispatch.js";
import { recordAttemptFailure } from "./job.js";
import { releaseConcurrencySlot } from "./slot-release.js";

/** What became of a job after a failed attempt, for the caller to log. */
export interface FailedAttemptOutcome {
  readonly jobId: number;
  readonly name: string;
  /** The attempt that failed: 1 for the first. Also the job's `attempts` count now. */
  readonly attempt: number;
  /** Attempts the job's retry policy allows in total. */
  readonly maxAttempts: number;
  readonly decision: FailureDecision;
  /** When the retry is due, for a retried job. */
  readonly retryAt?: Date;
}

/**
 * The one place a failed attempt is recorded, whatever failed it: a handler error, a timeout, an
 * unknown job, unreadable arguments, or (crash recovery) a process that died holding the claim.
 * The caller has already removed the job's claim in this transaction. The attempt is counted, its
 * error kept as the job's last error, the concurrency slot given up, and the job's retry policy
 * (from its definition in `definitions`; none there means one attempt) decides what follows:
 * - retry: the same job row is dispatched again for now + the backoff delay;
 * - fail: the job moves to failed executions with this error;
 * - discard (`discardOn` matched): the job is recorded as finished, its error kept as last error.
 * Pass the thrown value itself as `error`, so `retryOn`/`discardOn` can test it with `instanceof`.
 */
export async function recordFailedAttempt(trx: Db, jobId: number, error: unknown, now: Date, definitions: DefinitionLookup): Promise<FailedAttemptOutcome> {
  const row = await trx.selectFrom("firm_queue_jobs").selectAll().where("id", "=", jobId).executeTakeFirst();
  if (!row) throw new JobNotFoundError(jobId);
  const policy = definitions.get(row.class_name)?.options.retry ?? NO_RETRY;
  const attempt = row.attempts + 1;
  const decision = decideAfterFailure(policy, attempt, error);
  const errorJson = JSON.stringify(describeError(error));
  const job = toDispatchable(row);
  const outcome = { jobId, name: row.class_name, attempt, maxAttempts: policy.attempts, decision };

  await releaseConcurrencySlot(trx, job, now);

  if (decision.action === "retry") {
    const retryAt = new Date(now.getTime() + decision.delayMs);
    await recordAttemptFailure(trx, jobId, errorJson, now, { scheduledAt: retryAt });
    await dispatchJobs(trx, [{ ...job, scheduledAt: retryAt }], now);
    return { ...outcome, retryAt };
  }
  if (decision.action === "discard") {
    await recordAttemptFailure(trx, jobId, errorJson, now, { finishedAt: now });
    return outcome;
  }
  await recordAttemptFailure(trx, jobId, errorJson, now);
  await insertFailedExecution(trx, jobId, errorJson, now);
  return outcome;
}
