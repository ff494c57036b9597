import type { Db } from "../database/dialect.js";
import type { DispatchContext } from "./dispatch-context.js";
import { insertFailedExecution, type StoredError } from "./failed-execution.js";
import { incrementAttempts } from "./job.js";
import { findSlotHolder, releaseSemaphoreAndPromote } from "./semaphore-release.js";

/**
 * The one place a failed attempt is recorded, whatever failed it: a handler error, an unknown job,
 * unreadable arguments, or (with crash recovery) a process that died holding the claim. The
 * caller has already removed the job's claim in this transaction. The attempt is counted, the
 * job moves to failed executions with the error, and the concurrency slot the attempt held (if
 * any) goes to the next blocked job of its key. A retry must take a slot again when dispatched.
 */
export async function recordFailedAttempt(trx: Db, jobId: number, error: StoredError, now: Date, context: DispatchContext): Promise<void> {
  await incrementAttempts(trx, jobId, now);
  await insertFailedExecution(trx, jobId, error, now);
  const holder = await findSlotHolder(trx, jobId);
  if (holder) await releaseSemaphoreAndPromote(trx, context, holder, now);
}
