import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { ProcessExitError, ProcessMissingError, ProcessPrunedError } from "../errors.js";
import { removeClaim } from "../lifecycle/claimed-jobs.js";
import { recordFailedAttempt, type FailedAttemptOutcome } from "../lifecycle/failed-attempt.js";
import { emitFailure } from "../lifecycle/failure-events.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { dispatchContext } from "../lifecycle/dispatch-context.js";
import { toProcessRow, type ProcessRow } from "../models/process.js";

/** A dead process whose row was removed, and the jobs whose claims failed with it. */
export interface RecoveredProcess {
  readonly process: ProcessRow;
  readonly failedJobIds: readonly number[];
}

/** An attempt crash recovery failed: what the job's policy made of it, and whose claim it was. */
interface RecoveredAttempt {
  readonly outcome: FailedAttemptOutcome;
  readonly processId: number | null;
  readonly error: Error;
}

/**
 * Fail every claim `processId` holds with `error` (a counted, failed attempt) inside `trx`.
 * Each claim goes through the stale-worker guard, so a claim finalized meanwhile is left alone.
 */
async function failClaimsOf(
  database: Database,
  policies: JobPolicies,
  trx: Db,
  processId: number | null,
  error: Error,
): Promise<RecoveredAttempt[]> {
  const query = trx
    .selectFrom("firm_queue_claimed_executions")
    .select("job_id")
    .where("process_id", processId === null ? "is" : "=", processId);
  const rows = await database.dialect.withSkipLocked(query).execute();
  const failed: RecoveredAttempt[] = [];
  const now = database.clock.now();
  for (const row of rows) {
    const jobId = Number(row.job_id);
    if (!(await removeClaim(trx, jobId, processId))) continue;
    const outcome = await recordFailedAttempt(trx, jobId, error, now, dispatchContext(database, policies));
    failed.push({ outcome, processId, error });
  }
  return failed;
}

/**
 * Tell the job event listeners of this process what became of the attempts it failed, once their
 * transaction has committed: `job.retrying`, `job.failed` or `job.abandoned` with `recovered`
 * set (or `job.cancelled` for a job whose cancel was asked while it ran). A claim that belonged to
 * no process (`processId` null) has no attempt to tell of.
 */
function tellRecovered(policies: JobPolicies, attempts: readonly RecoveredAttempt[]): void {
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
  const recovered = await database.claimTransaction(async (trx) => {
    attempts.length = 0;
    const cutoff = new Date(database.clock.now().getTime() - thresholdMs);
    let query = trx.selectFrom("firm_queue_processes").selectAll().where("last_heartbeat_at", "<", cutoff);
    if (keepId !== null) query = query.where("id", "<>", keepId);
    if (keepId !== null && spareSupervised)
      query = query.where((eb) => eb.or([eb("supervisor_id", "is", null), eb("supervisor_id", "<>", keepId)]));
    const dead = (await database.dialect.withSkipLocked(query).execute()).map(toProcessRow);
    const recovered: RecoveredProcess[] = [];
    for (const process of dead) {
      const error = new ProcessPrunedError(process.name, process.pid, process.lastHeartbeatAt, thresholdMs);
      const failed = await failClaimsOf(database, policies, trx, process.id, error);
      await trx.deleteFrom("firm_queue_processes").where("id", "=", process.id).execute();
      attempts.push(...failed);
      recovered.push({ process, failedJobIds: jobIdsOf(failed) });
    }
    return recovered;
  });
  tellRecovered(policies, attempts);
  return recovered;
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
  const reaped = await database.claimTransaction(async (trx) => {
    attempts = [];
    const query = trx
      .selectFrom("firm_queue_processes")
      .selectAll()
      .where("supervisor_id", "=", supervisorId)
      .where("name", "=", name);
    const row = await database.dialect.withSkipLocked(query).executeTakeFirst();
    if (!row) return null;
    const process = toProcessRow(row);
    attempts = await failClaimsOf(
      database,
      policies,
      trx,
      process.id,
      new ProcessExitError(process.name, process.pid, how),
    );
    await trx.deleteFrom("firm_queue_processes").where("id", "=", process.id).execute();
    return { process, failedJobIds: jobIdsOf(attempts) };
  });
  tellRecovered(policies, attempts);
  return reaped;
}

/**
 * Fail, with ProcessMissingError, claims held by no registered process: their process vanished
 * without deregistering (its row was deleted by hand, or it claimed without registering).
 * Returns the failed job ids.
 */
export async function failOrphanedClaims(database: Database, policies: JobPolicies): Promise<number[]> {
  const attempts: RecoveredAttempt[] = [];
  await database.claimTransaction(async (trx) => {
    attempts.length = 0;
    const query = trx
      .selectFrom("firm_queue_claimed_executions as claim")
      .select(["claim.job_id", "claim.process_id"])
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
    const now = database.clock.now();
    for (const orphan of orphans) {
      const jobId = Number(orphan.job_id);
      const processId = orphan.process_id === null ? null : Number(orphan.process_id);
      if (!(await removeClaim(trx, jobId, processId))) continue;
      const error = new ProcessMissingError(processId);
      const outcome = await recordFailedAttempt(trx, jobId, error, now, dispatchContext(database, policies));
      attempts.push({ outcome, processId, error });
    }
  });
  tellRecovered(policies, attempts);
  return jobIdsOf(attempts);
}
