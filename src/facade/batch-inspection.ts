import type { Db } from "../database/dialect.js";
import { ConfigurationError } from "../errors.js";
import type { BatchCallbacks, StoredCallback } from "../lifecycle/batch-progress.js";
import {
  findBatchRow,
  listBatchJobRows,
  listBatchRows,
  type BatchJobSummary,
  type BatchSummary,
} from "../models/batch-listing.js";
import { decodeCursor, encodeCursor } from "../models/job-cursor.js";
import { positiveInteger, rejectUnknownKeys } from "../option-checks.js";
import { readableArguments } from "../serialization.js";
import { shown } from "../shown-value.js";

/** Options of `firm.inspect.batches()`. */
export interface ListBatchesOptions {
  /** Most batches per page, 1 to 500. Default 50. */
  readonly limit?: number | undefined;
  /** The `nextCursor` of the previous page; absent or null for the first page. */
  readonly cursor?: string | null | undefined;
}

/** Options of `firm.inspect.batch()`: which page of the batch's jobs. */
export interface BatchJobsOptions {
  /** Most jobs per page, 1 to 500. Default 50. */
  readonly limit?: number | undefined;
  /** The `nextCursor` of the previous page of this batch's jobs; absent or null for the first. */
  readonly cursor?: string | null | undefined;
}

/** One page of batches, newest first, and the cursor of the next (null on the last page). */
export interface BatchPage {
  readonly batches: BatchSummary[];
  readonly nextCursor: string | null;
}

/** A callback of a batch: the job it enqueues (or enqueued) when the batch ends. */
export interface BatchCallbackInfo {
  readonly name: string;
  /** Its arguments, decoded. */
  readonly arguments: unknown;
  readonly queue: string;
  readonly priority: number;
}

/** A batch with its callbacks and one page of its jobs, as `firm.inspect.batch()` returns it. */
export interface BatchDetail extends BatchSummary {
  /** Each callback the batch was written with; null for one it has not. */
  readonly callbacks: {
    readonly onSuccess: BatchCallbackInfo | null;
    readonly onFailure: BatchCallbackInfo | null;
    readonly onFinish: BatchCallbackInfo | null;
  };
  /** One page of its jobs, in the order they were added. */
  readonly jobs: BatchJobSummary[];
  /** Pass back as `cursor` for the next page of its jobs; null on the last page. */
  readonly nextCursor: string | null;
}

const PAGE_KEYS = new Set(["limit", "cursor"]);

/** `firm.inspect.batches()`: options checked, then one page of batches. */
export async function inspectBatches(db: Db, options: ListBatchesOptions): Promise<BatchPage> {
  const { limit, after } = checkPage(options, "inspect.batches");
  const page = await listBatchRows(db, limit, after);
  return { batches: page.batches, nextCursor: page.nextBefore === null ? null : encodeCursor({ id: page.nextBefore }) };
}

/** `firm.inspect.batch()`: the batch with its callbacks and a page of its jobs, or null when there is none. */
export async function inspectBatch(db: Db, id: number, options: BatchJobsOptions): Promise<BatchDetail | null> {
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 1)
    throw new ConfigurationError(`inspect.batch needs a batch id (a whole number of at least 1), got ${shown(id)}`);
  const batchId = id;
  const { limit, after } = checkPage(options, "inspect.batch");
  const row = await findBatchRow(db, batchId);
  if (row === undefined) return null;
  const page = await listBatchJobRows(db, batchId, limit, after);
  const { callbacks, ...summary } = row;
  return {
    ...summary,
    callbacks: callbackInfo(callbacks),
    jobs: page.jobs,
    nextCursor: page.nextAfter === null ? null : encodeCursor({ id: page.nextAfter }),
  };
}

/** A page's `limit` (1 to 500, default 50) and the id its `cursor` names (InvalidCursorError for a forged one). */
function checkPage(
  options: ListBatchesOptions | BatchJobsOptions,
  method: string,
): { limit: number; after: number | null } {
  if (typeof options !== "object" || options === null)
    throw new ConfigurationError(`${method} options must be an object`);
  rejectUnknownKeys(options, PAGE_KEYS, `${method} option`);
  const limit = positiveInteger(options.limit ?? 50, `${method} option limit`);
  if (limit > 500) throw new ConfigurationError(`${method} option limit must be at most 500, got ${limit}`);
  if (options.cursor === undefined || options.cursor === null) return { limit, after: null };
  const cursor = decodeCursor(String(options.cursor));
  return { limit, after: cursor.id };
}

/**
 * The stored callbacks (JSON written by `firm.batch`) as the callers see them. A damaged column
 * reads as no callbacks rather than an error: looking at a batch always works.
 */
function callbackInfo(json: string): BatchDetail["callbacks"] {
  let stored: BatchCallbacks;
  try {
    stored = (JSON.parse(json) ?? {}) as BatchCallbacks;
  } catch {
    stored = {};
  }
  const info = (callback: StoredCallback | undefined): BatchCallbackInfo | null =>
    callback === undefined
      ? null
      : {
          name: callback.name,
          arguments: readableArguments(callback.arguments),
          queue: callback.queue,
          priority: callback.priority,
        };
  return { onSuccess: info(stored.onSuccess), onFailure: info(stored.onFailure), onFinish: info(stored.onFinish) };
}
