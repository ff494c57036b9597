import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { ProcessExitError, ProcessMissingError, ProcessPrunedError } from "../errors.js";
import { removeClaim, requeueLockedClaims } from "../lifecycle/claimed-jobs.js";
import { recordFailedAttempt, type FailedAttemptOutcome } from "../lifecycle/failed-attempt.js";
import { emitFailure } from "../lifecycle/failure-events.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { dispatchContext } from "../lifecycle/dispatch-context.js";
import { JobMoves } from "../lifecycle/job-moves.js";
import { toProcessRow, type ProcessRow } from "../models/process.js";
import { removeClaimsWithoutJob } from "../models/claims-without-job.js";

/** A dead process whose row was removed, and the jobs whose claims failed with it. */
export interface RecoveredProcess {
  readonly process: ProcessRow;
  /** Claims whose handler had started: each a failed attempt. */
  readonly failedJobIds: readonly number[];
  /** Claims that never started (they waited in its buffer): back in line, no attempt counted. */
  readonly requeuedJobIds: readonly number[];
  /**
   * Claims it still holds that another transaction had locked (SKIP LOCKED passed them): its row
   * stays, so the next pass fails them the same way. 0 when the row was removed.
   */
  readonly claimsLeft: number;
}

/** An attempt crash recovery failed: what the job's policy made of it, and whose claim it was. */
interface RecoveredAttempt {
  readonly outcome: FailedAttemptOutcome;
  readonly processId: number | null;
  readonly error: Error;
}

/** What recovering a dead process's claims did: failed attempts, and jobs put back in line. */
interface RecoveredClaims {
  readonly failed: RecoveredAttempt[];
  readonly requeued: number[];
}

/**
 * Recover the claims `processId` holds inside `trx`: a claim whose handler had started is a
 * failed attempt with `error` (a job that kills its worker each time still runs out of attempts);
 * one that never started, taken ahead into the worker's buffer, goes back in line as it was.
 * Each started claim goes through the stale-worker guard, so one finalized meanwhile is left alone.
 */
async function recoverClaimsOf(
  database: Database,
  policies: JobPolicies,
  trx: Db,
  processId: number | null,
  error: Error,
  moves: JobMoves | undefined,
): Promise<RecoveredClaims> {
  const query = trx
    .selectFrom("firm_queue_claimed_executions")
    .select(["job_id", "started_at"])
    .where("process_id", processId === null ? "is" : "=", processId);
  const rows = await database.dialect.withSkipLocked(query).execute();
  return recoverLockedClaims(
    database,
    policies,
    trx,
    rows.map((row) => ({ ...row, process_id: processId })),
    () => error,
    moves,
  );
}

/** Recover claims this transaction has locked: fail the started ones, put the others back in line. */
async function recoverLockedClaims(
  database: Database,
  policies: JobPolicies,
  trx: Db,
  rows: readonly { job_id: number; started_at: Date | string | null; process_id: number | null }[],
  errorFor: (processId: number | null) => Error,
  moves: JobMoves | undefined,
): Promise<RecoveredClaims> {
  const failed: RecoveredAttempt[] = [];
  const requeued = rows.filter((row) => row.started_at === null).map((row) => Number(row.job_id));
  await requeueLockedClaims(trx, database, policies, requeued, moves);
  const now = database.clock.now();
  for (const row of rows) {
    if (row.started_at === null) continue;
    const jobId = Number(row.job_id);
    const processId = row.process_id === null ? null : Number(row.process_id);
    if (!(await removeClaim(trx, jobId, processId))) continue;
    const error = errorFor(processId);
    const outcome = await recordFailedAttempt(trx, jobId, error, now, dispatchContext(database, policies, moves));
    failed.push({ outcome, processId, error });
  }
  return { failed, requeued };
}

/**
 * Tell the job event listeners of this process what became of the attempts it failed, once their
 * transaction has committed: `job.retrying`, `job.failed` or `job.abandoned` with `recovered`
 * set (or `job.cancelled` for a job whose cancel was asked while it ran). A claim that belonged to
 * no process (`processId` null) has no attempt to tell of. Then what the transaction did to other
 * jobs, noted in `moves`.
 */
function tellRecovered(
  policies: JobPolicies,
  attempts: readonly RecoveredAttempt[],
  moves: JobMoves | undefined,
): void {
  const { events } = policies;
  for (const { outcome, processId, error } of attempts) {
    if (processId === null) continue;
    const attempt = {
      jobId: outcome.jobId,
      job: outcome.name,
      queue: outcome.queue,
      attempt: outcome.attempt,
      processId,
    };
    if (outcome.cancelled) {
      if (events.has("job.cancelled")) events.emit("job.cancelled", { ...attempt, started: true });
      continue;
    }
    emitFailure(events, outcome, { ...attempt, error, durationMs: 0, recovered: true });
  }
  // Then what those ends did to other jobs: slots handed on, dependents released or cancelled, batches ended.
  moves?.emit(events);
}

const jobIdsOf = (attempts: readonly RecoveredAttempt[]): number[] => attempts.map(({ outcome }) => outcome.jobId);

/**
 * Remove every process whose last heartbeat is older than `thresholdMs` (except `keepId`, the
 * caller's own row, and, when `spareSupervised`, the rows it supervises) and fail its claims with
 * ProcessPrunedError. A pruned process that is in fact alive finds its row gone at its next
 * heartbeat or claim and stops; it can no longer finish those jobs.
 */
export async function pruneDeadProcesses(
  database: Database,
  policies: JobPolicies,
  thresholdMs: number,
  keepId: number | null,
  spareSupervised = false,
): Promise<RecoveredProcess[]> {
  const attempts: RecoveredAttempt[] = [];
  const moves = JobMoves.for(policies.events);
  const recovered = await database.claimTransaction(async (trx) => {
    attempts.length = 0;
    moves?.reset();
    const cutoff = new Date(database.clock.now().getTime() - thresholdMs);
    let query = trx.selectFrom("firm_queue_processes").selectAll().where("last_heartbeat_at", "<", cutoff);
    if (keepId !== null) query = query.where("id", "<>", keepId);
    if (keepId !== null && spareSupervised)
      query = query.where((eb) => eb.or([eb("supervisor_id", "is", null), eb("supervisor_id", "<>", keepId)]));
    const dead = (await database.dialect.withSkipLocked(query).execute()).map(toProcessRow);
    const recovered: RecoveredProcess[] = [];
    for (const process of dead) {
      const error = new ProcessPrunedError(process.name, process.pid, process.lastHeartbeatAt, thresholdMs);
      const { failed, requeued } = await recoverClaimsOf(database, policies, trx, process.id, error, moves);
      attempts.push(...failed);
      // A claim the dead process's own unfinished transaction still locks (a cut-off host whose
      // connection the server has not dropped yet) was skipped. Removing the row now would leave
      // it to the orphan sweep, a different error for the same loss: keep the row, so a later pass
      // of this pruning fails it with ProcessPrunedError once the lock is gone.
      const claimsLeft = await countClaimsOf(trx, process.id);
      if (claimsLeft === 0) await trx.deleteFrom("firm_queue_processes").where("id", "=", process.id).execute();
      recovered.push({ process, failedJobIds: jobIdsOf(failed), requeuedJobIds: requeued, claimsLeft });
    }
    return recovered;
  });
  tellRecovered(policies, attempts, moves);
  return recovered;
}

/** Claims `processId` holds, locked or not (a plain read waits for no lock). */
async function countClaimsOf(trx: Db, processId: number): Promise<number> {
  const row = await trx
    .selectFrom("firm_queue_claimed_executions")
    .select((eb) => eb.fn.countAll().as("count"))
    .where("process_id", "=", processId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/**
 * Fail the claims of an exited child with ProcessExitError and remove its row. `how` says how it
 * ended ("killed by SIGKILL", "exit code 1"). Returns null when the child never registered.
 */
export async function reapExitedProcess(
  database: Database,
  policies: JobPolicies,
  supervisorId: number,
  name: string,
  how: string,
): Promise<RecoveredProcess | null> {
  let attempts: RecoveredAttempt[] = [];
  const moves = JobMoves.for(policies.events);
  const reaped = await database.claimTransaction(async (trx) => {
    attempts = [];
    moves?.reset();
    const query = trx
      .selectFrom("firm_queue_processes")
      .selectAll()
      .where("supervisor_id", "=", supervisorId)
      .where("name", "=", name);
    const row = await database.dialect.withSkipLocked(query).executeTakeFirst();
    if (!row) return null;
    const process = toProcessRow(row);
    const { failed, requeued } = await recoverClaimsOf(
      database,
      policies,
      trx,
      process.id,
      new ProcessExitError(process.name, process.pid, how),
      moves,
    );
    attempts = failed;
    await trx.deleteFrom("firm_queue_processes").where("id", "=", process.id).execute();
    return { process, failedJobIds: jobIdsOf(attempts), requeuedJobIds: requeued, claimsLeft: 0 };
  });
  tellRecovered(policies, attempts, moves);
  return reaped;
}

/**
 * Fail, with ProcessMissingError, claims held by no registered process whose handler had started:
 * their process vanished without deregistering (its row was deleted by hand, a stop left the
 * claims of jobs whose outcome it could not write, or it claimed without registering). Such claims
 * that never started go back in line, no attempt counted. Returns the failed job ids.
 */
export async function failOrphanedClaims(database: Database, policies: JobPolicies): Promise<number[]> {
  const attempts: RecoveredAttempt[] = [];
  const moves = JobMoves.for(policies.events);
  await database.claimTransaction(async (trx) => {
    attempts.length = 0;
    moves?.reset();
    const query = trx
      .selectFrom("firm_queue_claimed_executions as claim")
      .select(["claim.job_id", "claim.process_id", "claim.started_at"])
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("firm_queue_processes as process")
              .select("process.id")
              .whereRef("process.id", "=", "claim.process_id"),
          ),
        ),
      );
    const orphans = await database.dialect.withSkipLocked(query).execute();
    const { failed } = await recoverLockedClaims(
      database,
      policies,
      trx,
      orphans,
      (processId) => new ProcessMissingError(processId),
      moves,
    );
    attempts.push(...failed);
  });
  tellRecovered(policies, attempts, moves);
  return jobIdsOf(attempts);
}

/** How many claims without a job one sweep removes at most; the rest go at the next pass. */
const CLAIMS_WITHOUT_JOB_PER_SWEEP = 1_000;

/**
 * Remove claims whose job row is gone (deleted behind firm-queue's back) and return those job
 * ids. The claims table has no foreign key to the jobs table (it cost every claim a lock on its
 * job's row), and no path of firm-queue's deletes a claimed job, so only a hand-made delete
 * leaves such a claim. There is no job to fail or to tell of: the claim just goes. A worker still
 * running that job finds its claim gone when it ends, as for any claim taken from it.
 */
export async function removeClaimsOfGoneJobs(database: Database): Promise<number[]> {
  return removeClaimsWithoutJob(database.db, CLAIMS_WITHOUT_JOB_PER_SWEEP);
}
