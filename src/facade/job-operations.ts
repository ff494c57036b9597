import type { Database } from "../database/connection.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { ConfigurationError, JobNotFoundError } from "../errors.js";
import { dispatchContext } from "../lifecycle/dispatch-context.js";
import { JobMoves } from "../lifecycle/job-moves.js";
import { cancelJobsInTransaction, type CancelOutcome } from "../lifecycle/job-cancel.js";
import { namesAndQueues, unendedJobIds, type CancelFilter } from "../models/job-cancellation.js";
import { checkJobName, checkQueueName, positiveInteger, rejectUnknownKeys } from "../option-checks.js";
import { shown } from "../shown-value.js";

/** Options of `firm.jobs.cancelAll()`: which jobs (every condition given must match), and the batch size. */
export interface CancelAllOptions extends CancelFilter {
  /** Jobs cancelled per transaction. Default 500. */
  readonly batchSize?: number | undefined;
  /** Called after each batch with the jobs it cancelled and the running total (for a progress bar). */
  readonly onBatch?: ((progress: { readonly batch: number; readonly total: number }) => void) | undefined;
}

const CANCEL_ALL_KEYS = new Set(["queue", "name", "key", "batchSize", "onBatch"]);

/**
 * `firm.jobs`: operations on jobs by id or filter. Cancelling a waiting job ends it at once; a
 * running job's worker hears of its cancel within about a second and fires its AbortSignal
 * (see docs/jobs.md).
 */
export class JobOperations {
  constructor(
    private readonly database: () => Promise<Database>,
    private readonly policies: JobPolicies,
  ) {}

  /**
   * Cancel `ids` in one transaction; once it has committed, tell the listeners what it did to
   * other jobs (dependents cancelled or released, slots handed on, batches ended).
   */
  private async cancelInTransaction(database: Database, ids: readonly number[]): Promise<Map<number, CancelOutcome>> {
    const moves = JobMoves.for(this.policies.events);
    const outcomes = await database.claimTransaction((trx) => {
      moves?.reset();
      return cancelJobsInTransaction(trx, dispatchContext(database, this.policies, moves), ids, database.clock.now());
    });
    moves?.emit(this.policies.events);
    return outcomes;
  }

  private tellCancelled(database: Database, outcomes: ReadonlyMap<number, CancelOutcome>): Promise<void> {
    return tellWaitingCancelled(database, this.policies, outcomes);
  }

  /**
   * Cancel one job. Resolves to `cancelled` (it was waiting and has ended), `cancelling` (it is
   * running; its worker will stop it) or `ended` (it had already ended; nothing changed). A job id
   * that does not exist is a JobNotFoundError.
   */
  async cancel(id: number): Promise<CancelOutcome> {
    const jobId = checkJobId(id);
    const database = await this.database();
    const outcomes = await this.cancelInTransaction(database, [jobId]);
    const outcome = outcomes.get(jobId);
    if (outcome === undefined) throw new JobNotFoundError(jobId);
    await this.tellCancelled(database, outcomes);
    return outcome;
  }

  /**
   * Cancel every job that has not ended and matches `queue`, `name` and/or `key` (at least one is
   * required), `batchSize` per transaction. Returns how many were cancelled or are being
   * cancelled (running ones).
   */
  async cancelAll(options: CancelAllOptions): Promise<number> {
    rejectUnknownKeys(options ?? {}, CANCEL_ALL_KEYS, "jobs.cancelAll option");
    const filter: CancelFilter = {
      ...(options.queue !== undefined ? { queue: checkQueueName(options.queue, "jobs.cancelAll option queue") } : {}),
      ...(options.name !== undefined ? { name: checkJobName(options.name) } : {}),
      ...(options.key !== undefined ? { key: checkKey(options.key) } : {}),
    };
    if (Object.keys(filter).length === 0) {
      throw new ConfigurationError("jobs.cancelAll needs at least one of queue, name or key");
    }
    const batchSize = positiveInteger(options.batchSize ?? 500, "jobs.cancelAll option batchSize");
    if (options.onBatch !== undefined && typeof options.onBatch !== "function") {
      throw new ConfigurationError("jobs.cancelAll option onBatch must be a function");
    }
    const database = await this.database();
    let total = 0;
    // A cursor on the job id: the loop ends even while new matching jobs keep arriving.
    let afterId = 0;
    for (;;) {
      const ids = await unendedJobIds(database.db, filter, afterId, batchSize);
      if (ids.length === 0) return total;
      const outcomes = await this.cancelInTransaction(database, ids);
      let batch = 0;
      for (const outcome of outcomes.values()) if (outcome !== "ended") batch++;
      total += batch;
      await this.tellCancelled(database, outcomes);
      if (batch > 0) options.onBatch?.({ batch, total });
      afterId = ids.at(-1)!;
      if (ids.length < batchSize) return total;
    }
  }
}

/**
 * Tell the `job.cancelled` listeners of the waiting jobs a committed cancel ended (a running
 * job's worker tells of it when it has stopped the job). A failed read is reported, not thrown:
 * the cancel itself has happened.
 */
async function tellWaitingCancelled(
  database: Database,
  policies: JobPolicies,
  outcomes: ReadonlyMap<number, CancelOutcome>,
): Promise<void> {
  const { events } = policies;
  if (!events.has("job.cancelled")) return;
  const ended = [...outcomes].filter(([, outcome]) => outcome === "cancelled").map(([jobId]) => jobId);
  try {
    for (const job of await namesAndQueues(database.db, ended)) events.emit("job.cancelled", job);
  } catch (error) {
    events.reportError(error, "job.cancelled");
  }
}

function checkJobId(value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new ConfigurationError(`job id must be a whole number of at least 1, got ${shown(value)}`);
  }
  return value;
}

function checkKey(value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw new ConfigurationError(`jobs.cancelAll option key must be a non-empty string, got ${shown(value)}`);
  }
  return value;
}
