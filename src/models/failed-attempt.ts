import type { Db } from "../database/dialect.js";
import { insertFailedExecution, type StoredError } from "./failed-execution.js";
import { incrementAttempts } from "./job.js";

/**
 * The one place a failed attempt is recorded, whatever failed it: a handler error, an unknown job,
 * unreadable arguments, or (with crash recovery) a process that died holding the claim. The
 * caller has already removed the job's claim in this transaction. The attempt is counted and the
 * job moves to failed executions with the error.
 */
export async function recordFailedAttempt(trx: Db, jobId: number, error: StoredError, now: Date): Promise<void> {
  await incrementAttempts(trx, jobId, now);
  await insertFailedExecution(trx, jobId, error, now);
}
