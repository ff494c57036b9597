import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { dispatchContext } from "./dispatch-context.js";
import { recordFailedAttempt, type FailedAttemptOutcome } from "./failed-attempt.js";
import { dispatchStoredJobsNow } from "./job-dispatch.js";
import { JobMoves } from "./job-moves.js";
import type { ClaimedJob } from "../database/claimed-job.js";
import { finishJobs, type JobRow } from "../models/job.js";
import { releaseDependents } from "./dependency-release.js";
import { releaseJobKeys } from "../models/job-key.js";
import { writeResults } from "../models/job-progress.js";
import { endCancelled } from "./cancelled-release.js";
import { markClaimsStarted } from "../models/claim-start.js";
import { jobRowExists } from "../models/claims-without-job.js";
import {
  compareKeys,
  releaseSemaphoreAndPromote,
  releaseSemaphoresForRequeue,
  slotHolderOf,
} from "./semaphore-release.js";

/**
 * Give up the claim `processId` holds on a job. Returns false when the claim is no longer there
 * (recovered after a crash, released on shutdown, discarded): the caller then must not touch the
 * job, because someone else owns it now. This is the stale-worker guard. Also false, the claim
 * removed all the same, when the job's row is gone (deleted by hand): there is no attempt left to
 * record, and recording one would fail its transaction and leave the claim behind.
 */
export async function removeClaim(trx: Db, jobId: number, processId: number | null): Promise<boolean> {
  const result = await trx
    .deleteFrom("firm_queue_claimed_executions")
    .where("job_id", "=", jobId)
    .where("process_id", processId === null ? "is" : "=", processId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0 && (await jobRowExists(trx, jobId));
}

/** Ids of the jobs `processId` holds claims on. */
export async function claimedJobIds(db: Db, processId: number): Promise<number[]> {
  const rows = await db
    .selectFrom("firm_queue_claimed_executions")
    .select("job_id")
    .where("process_id", "=", processId)
    .execute();
  return rows.map((row) => Number(row.job_id));
}

/**
 * Put claimed jobs back in line without counting an attempt (graceful shutdown that ran out of
 * time, a process deregistering). `jobIds` limits it to those jobs; otherwise every claim of the
 * process. A job holding a concurrency slot gives it back and takes it again through the
 * semaphore in the same transaction, so it keeps its place. Returns the job ids released.
 */
export async function releaseClaims(
  database: Database,
  policies: JobPolicies,
  processId: number,
  jobIds?: readonly number[],
): Promise<number[]> {
  const moves = JobMoves.for(policies.events);
  const released = await database.claimTransaction(async (trx) => {
    moves?.reset();
    let query = trx.selectFrom("firm_queue_claimed_executions").select("job_id").where("process_id", "=", processId);
    if (jobIds !== undefined) {
      if (jobIds.length === 0) return [];
      query = query.where("job_id", "in", jobIds);
    }
    const rows = await database.dialect.withSkipLocked(query).execute();
    const released = rows.map((row) => Number(row.job_id));
    await requeueLockedClaims(trx, database, policies, released, moves);
    return released;
  });
  moves?.emit(policies.events);
  return released;
}

/**
 * Put the jobs of claims this transaction has locked back in line, attempts unchanged: each
 * claim goes, its concurrency slot is given back and taken again, and the job is dispatched as
 * it was (a job whose cancel was requested ends cancelled instead). What it does to other jobs
 * (dependents cancelled or released, a batch ended) is noted in `moves`, for the caller to tell
 * after its commit.
 */
export async function requeueLockedClaims(
  trx: Db,
  database: Database,
  policies: JobPolicies,
  released: readonly number[],
  moves?: JobMoves,
): Promise<void> {
  if (released.length === 0) return;
  const now = database.clock.now();
  const context = dispatchContext(database, policies, moves);
  const holders = await trx
    .selectFrom("firm_queue_jobs")
    .select(["id", "class_name", "concurrency_key", "semaphore_id", "cancelled_at"])
    .where("id", "in", released)
    .execute();
  await trx.deleteFrom("firm_queue_claimed_executions").where("job_id", "in", released).execute();
  await releaseSemaphoresForRequeue(trx, context, holders.map(slotHolderOf), now);
  // A job whose cancel was requested does not go back in line: it ends cancelled here.
  const cancelled = new Set(holders.filter((row) => row.cancelled_at !== null).map((row) => Number(row.id)));
  await endCancelled(trx, context, [...cancelled], now);
  await dispatchStoredJobsNow(
    trx,
    released.filter((id) => !cancelled.has(id)),
    now,
    context,
  );
}

/**
 * Record successful attempts of jobs `processId` claimed, in one transaction for the whole batch:
 * remove the claims this process still holds (the stale-worker guard: `DELETE … RETURNING` says
 * which), mark those jobs finished (or delete them when not preserving finished jobs), and hand
 * each one's concurrency slot to the next blocked job of its key. Returns the ids recorded; a job
 * missing from it had lost its claim, and nothing was changed for it.
 *
 * `startedIds` are claims of this process (of jobs not in `jobs`) whose handlers have started
 * since they were claimed: they are marked started in the same statement or transaction, so the
 * marks cost no commit of their own; with no jobs to record, the marks are written alone.
 */
export async function finishClaimedJobs(
  database: Database,
  policies: JobPolicies,
  processId: number,
  jobs: readonly FinishedJob[],
  preserve: boolean,
  startedIds: readonly number[] = [],
): Promise<Set<number>> {
  if (jobs.length === 0) {
    await markClaimsStarted(database.db, processId, startedIds, database.clock.now());
    return new Set();
  }
  const { finishClaimed, finishCounted } = database.dialect;
  // No slot, key or dependents to hand on: the database's single statement does the guard and
  // the record. Jobs with dependents or a batch but nothing else: its counting statement, which
  // also lowers their dependents' and batches' counts, as long as none reaches 0. A job either
  // left (a dependent was added while it ran; a count reached 0; or its claim was lost) goes
  // through the transaction below, which finds out which; it writes the marks again (a no-op
  // for those the statement wrote: PostgreSQL's undoes them all when it meets either case).
  const statement = jobs.every(isPlainFinish) ? finishClaimed : jobs.every(isCountedFinish) ? finishCounted : undefined;
  if (statement !== undefined) {
    const jobIds = jobs.map((job) => Number(job.id));
    const inBatch = jobs.filter((job) => job.batch_id !== null);
    const batchJobIds = inBatch.map((job) => Number(job.id));
    const batchIds = [...new Set(inBatch.map((job) => Number(job.batch_id)))];
    const now = database.clock.now();
    const recorded = new Set(
      await statement(database.db, { jobIds, startedIds, processId, now, preserve, batchJobIds, batchIds }),
    );
    if (recorded.size === jobs.length) return recorded;
    const rest = jobs.filter((job) => !recorded.has(Number(job.id)));
    for (const id of await finishInTransaction(database, policies, processId, rest, preserve, startedIds))
      recorded.add(id);
    return recorded;
  }
  return finishInTransaction(database, policies, processId, jobs, preserve, startedIds);
}

/** {@link finishClaimedJobs} in several statements: for jobs with a slot, key, result or dependents. */
async function finishInTransaction(
  database: Database,
  policies: JobPolicies,
  processId: number,
  jobs: readonly FinishedJob[],
  preserve: boolean,
  startedIds: readonly number[],
): Promise<Set<number>> {
  const moves = JobMoves.for(policies.events);
  const recorded = await database.claimTransaction(async (trx) => {
    moves?.reset();
    await markClaimsStarted(trx, processId, startedIds, database.clock.now());
    const removed = await trx
      .deleteFrom("firm_queue_claimed_executions")
      .where("process_id", "=", processId)
      .where(
        "job_id",
        "in",
        jobs.map((job) => Number(job.id)),
      )
      .returning("job_id")
      .execute();
    const finished = new Set(removed.map((row) => Number(row.job_id)));
    if (finished.size === 0) return finished;
    const now = database.clock.now();
    // Read under the rows' locks: a dependent added while the job ran is seen here.
    const withDependents = await finishJobs(trx, database.dialect, [...finished], now, preserve);
    // A job enqueued without a unique key holds none (the claim says so).
    const keyed = jobs.filter((job) => job.job_key !== null && finished.has(Number(job.id)));
    await releaseJobKeys(
      trx,
      keyed.map((job) => Number(job.id)),
      now,
      true,
    );
    if (preserve)
      await writeResults(
        trx,
        jobs
          .filter((job) => (job.result ?? null) !== null && finished.has(Number(job.id)))
          .map((job) => [Number(job.id), job.result!]),
      );
    const holders = jobs
      .filter((job) => finished.has(Number(job.id)) && job.concurrency_key !== null)
      .map(slotHolderOf)
      .sort((a, b) => compareKeys(a.concurrencyKey!, b.concurrencyKey!));
    const context = dispatchContext(database, policies, moves);
    for (const holder of holders) await releaseSemaphoreAndPromote(trx, context, holder, now);
    if (withDependents.length > 0) {
      const results = new Map<number, string>();
      for (const job of jobs) if ((job.result ?? null) !== null) results.set(Number(job.id), job.result!);
      // A job with no batch id is in no batch: its membership is not looked up.
      const outOfBatch = new Set(jobs.filter((job) => job.batch_id === null).map((job) => Number(job.id)));
      const members = withDependents.filter((id) => !outOfBatch.has(id));
      await releaseDependents(trx, context, withDependents, "finished", now, results, members);
    }
    return finished;
  });
  moves?.emit(policies.events);
  return recorded;
}

/**
 * Record a failed attempt (see `recordFailedAttempt`: retried, failed or discarded per the job's
 * retry policy), if `processId` still holds the claim. Returns null (and changes nothing)
 * otherwise.
 */
export async function failClaimedJob(
  database: Database,
  policies: JobPolicies,
  jobId: number,
  processId: number,
  error: unknown,
  options: { readonly keepSlot?: boolean } = {},
): Promise<FailedAttemptOutcome | null> {
  const moves = JobMoves.for(policies.events);
  const outcome = await database.claimTransaction(async (trx) => {
    moves?.reset();
    if (!(await removeClaim(trx, jobId, processId))) return null;
    const context = dispatchContext(database, policies, moves);
    return recordFailedAttempt(trx, jobId, error, database.clock.now(), context, options);
  });
  moves?.emit(policies.events);
  return outcome;
}

/**
 * Give back the concurrency slot a job kept after its attempt was recorded failed (a timed-out
 * handler that has now really ended), and promote the next blocked job of its key.
 */
export async function releaseKeptSlot(
  database: Database,
  policies: JobPolicies,
  job: Pick<JobRow, "class_name" | "concurrency_key" | "semaphore_id">,
): Promise<void> {
  if (job.concurrency_key === null) return;
  const holder = slotHolderOf(job);
  const moves = JobMoves.for(policies.events);
  await database.claimTransaction((trx) => {
    moves?.reset();
    return releaseSemaphoreAndPromote(trx, dispatchContext(database, policies, moves), holder, database.clock.now());
  });
  moves?.emit(policies.events);
}

/** What recording a successful attempt needs of a job. */
export type FinishedJob = Pick<
  ClaimedJob,
  "id" | "class_name" | "concurrency_key" | "semaphore_id" | "job_key" | "result"
> & { readonly has_dependents?: number; readonly batch_id?: number | null };

/** A finish with nothing to hand on or store: no concurrency slot, unique key, result or dependents. */
function isPlainFinish(job: FinishedJob): boolean {
  return isCountedFinish(job) && !job.has_dependents;
}

/** A finish whose only work besides the record is counting: no concurrency slot, unique key or result. */
function isCountedFinish(job: FinishedJob): boolean {
  return job.concurrency_key === null && (job.job_key ?? null) === null && (job.result ?? null) === null;
}
