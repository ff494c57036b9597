import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { dispatchContext, type DispatchContext } from "./dispatch-context.js";
import {
  lockClaims,
  lockPendingJobs,
  markCancelled,
  markCancelledAttempt,
  requestCancel,
  takeWaitingJobs,
} from "../models/job-cancellation.js";
import { releaseJobKeys } from "../models/job-key.js";
import { compareKeys, releaseSemaphoreAndPromote, slotHolderOf, type SlotHolder } from "./semaphore-release.js";
import { removeClaim } from "./claimed-jobs.js";
import { releaseDependents } from "./dependency-release.js";
import { JobMoves } from "./job-moves.js";

/**
 * What a cancel did to one job:
 * - `cancelled`: it was waiting (ready, scheduled or blocked) and has ended, cancelled;
 * - `cancelling`: it is running; its worker fires the handler's AbortSignal when it hears of
 *   it (within about a second) and records it cancelled, whatever the handler does after;
 * - `ended`: it had already ended (finished, failed or cancelled before): nothing changed.
 */
export type CancelOutcome = "cancelled" | "cancelling" | "ended";

/**
 * Cancel jobs by id inside `trx`: waiting ones leave the line and end cancelled, in this
 * transaction (a ready job's concurrency slot goes to the next blocked job of its key, unique
 * keys are given back); running ones get a cancel request. Returns each id's outcome; ids with
 * no job are missing from the map.
 */
export async function cancelJobsInTransaction(
  trx: Db,
  context: DispatchContext,
  jobIds: readonly number[],
  now: Date,
): Promise<Map<number, CancelOutcome>> {
  const outcomes = new Map<number, CancelOutcome>();
  if (jobIds.length === 0) return outcomes;
  const taken = await takeWaitingJobs(trx, jobIds);
  const cancelled = taken.map((job) => job.jobId);
  await markCancelled(trx, cancelled, now);
  await releaseJobKeys(trx, cancelled, now);
  const ready = taken.filter((job) => job.wasReady).map((job) => job.jobId);
  for (const holder of await slotHolders(trx, ready)) await releaseSemaphoreAndPromote(trx, context, holder, now);
  for (const id of cancelled) outcomes.set(id, "cancelled");
  // Jobs waiting for their dependencies are in no execution table: they end here too.
  const pending = await lockPendingJobs(
    trx,
    context.dialect,
    jobIds.filter((id) => !outcomes.has(id)),
  );
  await markCancelled(trx, pending, now);
  await releaseJobKeys(trx, pending, now);
  for (const id of pending) outcomes.set(id, "cancelled");
  // Their dependents are cancelled in turn, or run anyway (`onDependencyFailure`).
  await releaseDependents(trx, context, [...cancelled, ...pending], "cancelled", now);
  const rest = jobIds.filter((id) => !outcomes.has(id));
  const running = await lockClaims(trx, context.dialect, rest);
  await requestCancel(trx, running, now);
  for (const id of running) outcomes.set(id, "cancelling");
  const others = rest.filter((id) => !outcomes.has(id));
  if (others.length > 0) {
    const existing = await trx.selectFrom("firm_queue_jobs").select("id").where("id", "in", others).execute();
    for (const row of existing) outcomes.set(Number(row.id), "ended");
  }
  return outcomes;
}

/**
 * Record that a running job was cancelled, if `processId` still holds its claim (the
 * stale-worker guard): the claim goes, the job ends (its attempt counted if it started), its concurrency slot
 * goes to the next blocked job of its key, and its unique key is given back. Returns false when
 * the claim was no longer there.
 */
export async function recordCancelledClaim(
  database: Database,
  policies: JobPolicies,
  jobId: number,
  processId: number,
  attempted = true,
): Promise<boolean> {
  const moves = JobMoves.for(policies.events);
  const recorded = await database.claimTransaction(async (trx) => {
    moves?.reset();
    if (!(await removeClaim(trx, jobId, processId))) return false;
    const now = database.clock.now();
    await markCancelledAttempt(trx, jobId, now, attempted);
    await releaseJobKeys(trx, [jobId], now);
    const context = dispatchContext(database, policies, moves);
    for (const holder of await slotHolders(trx, [jobId])) await releaseSemaphoreAndPromote(trx, context, holder, now);
    await releaseDependents(trx, context, [jobId], "cancelled", now);
    return true;
  });
  moves?.emit(policies.events);
  return recorded;
}

/** The concurrency slots `jobIds` hold, in key order so transactions lock semaphores alike. */
async function slotHolders(trx: Db, jobIds: readonly number[]): Promise<SlotHolder[]> {
  if (jobIds.length === 0) return [];
  const rows = await trx
    .selectFrom("firm_queue_jobs")
    .select(["class_name", "concurrency_key", "semaphore_id"])
    .where("id", "in", jobIds)
    .where("concurrency_key", "is not", null)
    .execute();
  return rows.map(slotHolderOf).sort((a, b) => compareKeys(a.concurrencyKey!, b.concurrencyKey!));
}
