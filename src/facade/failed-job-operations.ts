import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { ConfigurationError } from "../errors.js";
import { checkJobName, checkQueueName, positiveInteger, rejectUnknownKeys } from "../option-checks.js";
import {
  countFailedJobs,
  discardLockedFailedJobs,
  listFailedJobs,
  lockFailedJobsBatch,
  lockFailedJobsById,
  retryLockedFailedJobs,
  type FailedJobFilter,
  type FailedJobInfo,
} from "../lifecycle/failed-jobs.js";
import type { JobRow } from "../models/job.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { dispatchContext } from "../lifecycle/dispatch-context.js";
import { shown } from "../shown-value.js";

/** Options of `firm.failedJobs.list()`. */
export interface ListFailedJobsOptions extends FailedJobFilter {
  /** Most jobs returned. Default 100. */
  readonly limit?: number | undefined;
  /** Only jobs with a larger id: pass the last id of one page to get the next. */
  readonly afterId?: number | undefined;
}

/** Options of `retryAll` and `deleteAll`. */
export interface BatchOptions extends FailedJobFilter {
  /** Jobs changed per transaction. Default 500. */
  readonly batchSize?: number | undefined;
  /** Called after each batch with the jobs it changed and the running total. */
  readonly onBatch?: ((progress: { readonly batch: number; readonly total: number }) => void) | undefined;
}

const LIST_KEYS = new Set(["name", "queue", "limit", "afterId"]);
const FILTER_KEYS = new Set(["name", "queue"]);
const BATCH_KEYS = new Set(["name", "queue", "batchSize", "onBatch"]);

/**
 * `firm.failedJobs`: see, retry and delete jobs that ran out of attempts. Every change runs in
 * short transactions that lock the failed rows they touch, skipping rows another operation holds.
 */
export class FailedJobOperations {
  constructor(
    private readonly database: () => Promise<Database>,
    private readonly policies: JobPolicies,
  ) {}

  /** Failed jobs in id order (oldest first), with the error that failed each. */
  async list(options: ListFailedJobsOptions = {}): Promise<FailedJobInfo[]> {
    rejectUnknownKeys(options, LIST_KEYS, "failedJobs.list option");
    const limit = positiveInteger(options.limit ?? 100, "failedJobs.list option limit");
    const afterId = options.afterId === undefined ? 0 : jobId(options.afterId, "failedJobs.list option afterId");
    return listFailedJobs((await this.database()).db, checkFilter(options), limit, afterId);
  }

  /** How many failed jobs there are (of one name and/or queue). */
  async count(filter: FailedJobFilter = {}): Promise<number> {
    rejectUnknownKeys(filter, FILTER_KEYS, "failedJobs.count option");
    return countFailedJobs((await this.database()).db, checkFilter(filter));
  }

  /**
   * Send failed jobs back to their queues with their attempts reset, through dispatch (so
   * concurrency controls apply). Every id must be a failed job, or nothing changes and a
   * JobNotFailedError, JobRunningError or JobNotFoundError says which is not. Returns the count.
   */
  async retry(ids: number | readonly number[]): Promise<number> {
    return this.byIds(ids, "retried", (trx, jobs, now, database) =>
      retryLockedFailedJobs(trx, jobs, now, dispatchContext(database, this.policies)),
    );
  }

  /** Retry every failed job (of one name and/or queue), in batches. Returns the count. */
  async retryAll(options: BatchOptions = {}): Promise<number> {
    return this.inBatches(options, "retryAll", (trx, jobs, now, database) =>
      retryLockedFailedJobs(trx, jobs, now, dispatchContext(database, this.policies)),
    );
  }

  /**
   * Delete failed jobs for good. A job that is running (it was retried and a worker has it) is
   * refused with JobRunningError; like `retry`, one bad id changes nothing. Returns the count.
   */
  async delete(ids: number | readonly number[]): Promise<number> {
    return this.byIds(ids, "deleted", (trx, jobs) => discardLockedFailedJobs(trx, jobs));
  }

  /** Delete every failed job (of one name and/or queue), in batches. Returns the count. */
  async deleteAll(options: BatchOptions = {}): Promise<number> {
    return this.inBatches(options, "deleteAll", (trx, jobs) => discardLockedFailedJobs(trx, jobs));
  }

  /** @deprecated The old name of {@link FailedJobOperations.delete}. */
  async discard(ids: number | readonly number[]): Promise<number> {
    return this.delete(ids);
  }

  /** @deprecated The old name of {@link FailedJobOperations.deleteAll}. */
  async discardAll(options: BatchOptions = {}): Promise<number> {
    return this.deleteAll(options);
  }

  private async byIds(ids: number | readonly number[], action: "retried" | "deleted", change: Change): Promise<number> {
    const list = (typeof ids === "number" ? [ids] : Array.isArray(ids) ? ids : [ids as unknown]).map((id) =>
      jobId(id, "job id"),
    );
    const unique = [...new Set(list)];
    const database = await this.database();
    return database.claimTransaction(async (trx) => {
      const jobs = await lockFailedJobsById(trx, database.dialect, unique, action);
      return change(trx, jobs, database.clock.now(), database);
    });
  }

  private async inBatches(options: BatchOptions, what: string, change: Change): Promise<number> {
    rejectUnknownKeys(options, BATCH_KEYS, `failedJobs.${what} option`);
    const filter = checkFilter(options);
    const batchSize = positiveInteger(options.batchSize ?? 500, `failedJobs.${what} option batchSize`);
    if (options.onBatch !== undefined && typeof options.onBatch !== "function") {
      throw new ConfigurationError(`failedJobs.${what} option onBatch must be a function`);
    }
    const database = await this.database();
    let total = 0;
    // A cursor on the job id: a job retried here that fails again before we finish is not
    // picked up a second time, so the loop always ends.
    let afterId = 0;
    for (;;) {
      const { count, lastId, seen } = await database.claimTransaction(async (trx) => {
        const jobs = await lockFailedJobsBatch(trx, database.dialect, filter, afterId, batchSize);
        const lastId = jobs.length === 0 ? afterId : Math.max(...jobs.map((job) => Number(job.id)));
        return { count: await change(trx, jobs, database.clock.now(), database), lastId, seen: jobs.length };
      });
      total += count;
      afterId = lastId;
      if (count > 0) options.onBatch?.({ batch: count, total });
      if (seen < batchSize) return total;
    }
  }
}

type Change = (trx: Db, jobs: readonly JobRow[], now: Date, database: Database) => Promise<number>;

function checkFilter(filter: FailedJobFilter): FailedJobFilter {
  return {
    ...(filter.name !== undefined ? { name: checkJobName(filter.name) } : {}),
    ...(filter.queue !== undefined ? { queue: checkQueueName(filter.queue, "queue") } : {}),
  };
}

function jobId(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new ConfigurationError(`${what} must be a job id (a whole number of at least 1), got ${shown(value)}`);
  }
  return value;
}
