import type { EnqueueTransaction } from "../database/app-transaction.js";
import type { Database } from "../database/connection.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import { ConfigurationError } from "../errors.js";
import {
  batchRequests,
  storedCallback,
  writeBatch,
  type BatchCallbackSpec,
  type BatchJobSpec,
} from "../lifecycle/batch-enqueue.js";
import type { BatchCallbacks, StoredCallback } from "../lifecycle/batch-progress.js";
import type { EnqueueResult } from "../lifecycle/enqueue-result.js";
import { readBatch, type BatchState } from "../models/batch.js";
import { positiveInteger, rejectUnknownKeys } from "../option-checks.js";

export type { BatchJob } from "../definitions/job-definition.js";
import type { NamedJob } from "../definitions/job-names.js";
import type { EnqueueOptions } from "../definitions/job-definition.js";

/** One job of `firm.batch`, by name: checked against the FirmQueue's `Jobs` map when it has one. */
// biome-ignore lint/suspicious/noExplicitAny: as FirmQueue's default: no map
export type NamedBatchJob<Jobs extends object = any> = NamedJob<
  Jobs,
  { readonly options?: Omit<EnqueueOptions, "transaction"> | undefined }
>;
export type { BatchCallbackSpec as BatchCallback };

/**
 * Options of `firm.batch`: the callbacks, and the application's transaction. `Jobs`: the
 * FirmQueue's map of job names to argument types, which types the callbacks' `{ name, args }`.
 */
// biome-ignore lint/suspicious/noExplicitAny: as FirmQueue's default: no map
export interface BatchEnqueueOptions<Jobs extends object = any> {
  /** Enqueued once every job of the batch has finished. */
  readonly onSuccess?: NamedJob<Jobs> | undefined;
  /** Enqueued once every job has ended, when one of them failed for good. */
  readonly onFailure?: NamedJob<Jobs> | undefined;
  /** Enqueued once every job has ended, however they ended. */
  readonly onFinish?: NamedJob<Jobs> | undefined;
  /** The application's open transaction: the batch is written inside it (as `enqueue`'s). */
  readonly transaction?: EnqueueTransaction | undefined;
}

/** What `firm.batch` wrote: the batch's id and one result per job, in order. */
export interface BatchResult {
  readonly id: number;
  readonly jobs: EnqueueResult[];
}

/** A batch as `firm.getBatch` reports it. */
export interface BatchInfo {
  readonly id: number;
  /** `pending` while some of its jobs have not ended; then `finished` (all finished), `failed` (one failed for good) or `cancelled` (none failed, one was cancelled). */
  readonly state: BatchState;
  readonly total: number;
  readonly pending: number;
  readonly finished: number;
  readonly failed: number;
  readonly cancelled: number;
}

const OPTION_KEYS = new Set(["onSuccess", "onFailure", "onFinish", "transaction"]);
const CALLBACKS = ["onSuccess", "onFailure", "onFinish"] as const;

/**
 * `firm.batch`: check every job and callback (InvalidBatchError, naming the place, for a bad one),
 * then write the batch, its jobs and their memberships in one transaction.
 */
export async function enqueueBatch(
  database: () => Promise<Database>,
  registry: JobRegistry,
  policies: JobPolicies,
  jobs: readonly BatchJobSpec[],
  options: BatchEnqueueOptions = {},
): Promise<BatchResult> {
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new ConfigurationError("batch options must be an object");
  rejectUnknownKeys(options, OPTION_KEYS, "batch option");
  const requests = batchRequests(registry, jobs, "batch.jobs");
  const callbacks: Partial<Record<(typeof CALLBACKS)[number], StoredCallback>> = {};
  for (const which of CALLBACKS) {
    const callback = options[which];
    if (callback !== undefined) callbacks[which] = await storedCallback(registry, callback, `batch.${which}`);
  }
  return writeBatch(await database(), policies, requests, callbacks as BatchCallbacks, options.transaction);
}

/** `firm.getBatch`: the batch's counts, or null when there is no batch with that id. */
export async function findBatch(database: Database, id: number): Promise<BatchInfo | null> {
  const row = await readBatch(database.db, positiveInteger(id, "getBatch id"));
  if (row === undefined) return null;
  return {
    id: row.id,
    state: row.state,
    total: row.total,
    pending: row.pending,
    finished: row.finished,
    failed: row.failed,
    cancelled: row.cancelled,
  };
}
