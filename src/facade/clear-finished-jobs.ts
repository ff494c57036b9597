import type { Database } from "../database/connection.js";
import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { checkJobName, positiveInteger, rejectUnknownKeys } from "../option-checks.js";
import { repeatBatches } from "../batches.js";
import { deleteFinishedJobsBatch } from "../models/finished-jobs.js";
import { deleteEndedBatches } from "../models/ended-batches.js";

/** Options of `firm.clearFinishedJobs()`. */
export interface ClearFinishedJobsOptions {
  /**
   * Delete jobs finished longer ago than this duration, or finished before this Date. Default:
   * the FirmQueue's `clearFinishedJobsAfter` (required when that is `false`).
   */
  readonly olderThan?: Duration | Date | undefined;
  /** Jobs deleted per transaction. Default 500. */
  readonly batchSize?: number | undefined;
  /** Only jobs of this name. */
  readonly name?: string | undefined;
}

const KEYS = new Set(["olderThan", "batchSize", "name"]);

/**
 * Check the options of `clearFinishedJobs`, then delete in batches; without a `name`, then the
 * batches (`firm.batch`) that ended before the cutoff and whose jobs are all gone or ended before
 * it. Returns the count of jobs deleted.
 */
export async function clearFinishedJobs(
  database: Database,
  options: ClearFinishedJobsOptions,
  defaultAfter: number | null,
): Promise<number> {
  rejectUnknownKeys(options, KEYS, "clearFinishedJobs option");
  const cutoff = cutoffOf(options.olderThan, defaultAfter, database.clock.now());
  const batchSize = positiveInteger(options.batchSize ?? 500, "clearFinishedJobs option batchSize");
  const name = options.name === undefined ? undefined : checkJobName(options.name);
  const selection = { cutoff, ...(name !== undefined ? { name } : {}) };
  const deleted = await repeatBatches(batchSize, () =>
    database.claimTransaction((trx) => deleteFinishedJobsBatch(trx, database.dialect, selection, batchSize)),
  );
  // Batches have no name: only a clear of every job name removes the ended ones it left empty.
  if (name === undefined) await clearEndedBatches(database, cutoff, batchSize);
  return deleted;
}

/** Delete every batch that ended before `cutoff` and whose jobs are gone or ended before it, `batchSize` looked at per transaction. */
async function clearEndedBatches(database: Database, cutoff: Date, batchSize: number): Promise<void> {
  let afterId = 0;
  for (;;) {
    const { looked, lastId } = await database.claimTransaction((trx) =>
      deleteEndedBatches(trx, database.dialect, cutoff, batchSize, afterId),
    );
    if (looked < batchSize) return;
    afterId = lastId;
  }
}

function cutoffOf(olderThan: Duration | Date | undefined, defaultAfter: number | null, now: Date): Date {
  if (olderThan instanceof Date) {
    if (Number.isNaN(olderThan.getTime()))
      throw new ConfigurationError("clearFinishedJobs option olderThan is an invalid Date");
    return olderThan;
  }
  if (olderThan === undefined) {
    if (defaultAfter === null) {
      throw new ConfigurationError(
        "clearFinishedJobs needs olderThan: this FirmQueue has clearFinishedJobsAfter: false",
      );
    }
    return new Date(now.getTime() - defaultAfter);
  }
  return new Date(now.getTime() - toMilliseconds(olderThan, "clearFinishedJobs option olderThan"));
}
