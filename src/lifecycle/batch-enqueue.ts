import type { EnqueueTransaction } from "../database/app-transaction.js";
import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { validateArguments } from "../definitions/argument-validation.js";
import { concurrencyKeyFor } from "../definitions/concurrency-options.js";
import type { BatchJob, ResolvedJobOptions } from "../definitions/job-definition.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { rateLimitKeyFor } from "../definitions/rate-limit-options.js";
import { workflowJobOptions, type DeclaredJobs } from "../definitions/workflow-job-options.js";
import { BatchEndedError, InvalidBatchError } from "../errors.js";
import { insertBatch, lockBatches, writeBatchCounts } from "../models/batch.js";
import { checkJobName } from "../option-checks.js";
import { serializeArguments } from "../serialization.js";
import { shown } from "../shown-value.js";
import type { BatchCallbacks, StoredCallback } from "./batch-progress.js";
import { enqueueJobs, type EnqueueRequest } from "./enqueue.js";
import type { EnqueueResult } from "./enqueue-result.js";

export type BatchJobSpec = BatchJob;

/** A batch callback: the job to enqueue when the batch ends. */
export interface BatchCallbackSpec {
  readonly name: string;
  readonly args?: unknown;
}

/** The most jobs one call may write into a batch. */
export const MAX_BATCH_JOBS = 100_000;

const JOB_KEYS = new Set(["name", "args", "options"]);
const CALLBACK_KEYS = new Set(["name", "args"]);

/**
 * Check a batch's list of jobs (`path`: how the error names it) and turn it into enqueue
 * requests: an array of 1 to {@link MAX_BATCH_JOBS} objects `{ name, args?, options? }`, each
 * naming a job declared in this process that has no unique key. Throws an InvalidBatchError for the
 * first fault; nothing has been written.
 */
export function batchRequests(registry: DeclaredJobs, jobs: unknown, path: string): EnqueueRequest[] {
  if (!Array.isArray(jobs))
    throw new InvalidBatchError(path, `must be an array of jobs { name, args, options? }, got ${shown(jobs)}`);
  if (jobs.length === 0) throw new InvalidBatchError(path, "is empty: a batch needs at least one job");
  if (jobs.length > MAX_BATCH_JOBS)
    throw new InvalidBatchError(path, `has ${jobs.length} jobs: one call may write at most ${MAX_BATCH_JOBS}`);
  return jobs.map((job, index) => {
    const place = `${path}[${index}]`;
    const spec = checkShape(job, place, JOB_KEYS, "{ name, args, options? }") as BatchJobSpec;
    const defaults = declaredOptions(registry, spec.name, place);
    const options = spec.options;
    if (options !== undefined) {
      if (typeof options !== "object" || options === null || Array.isArray(options))
        throw new InvalidBatchError(`${place}.options`, `must be an object, got ${shown(options)}`);
      if (Object.hasOwn(options, "transaction"))
        throw new InvalidBatchError(
          `${place}.options.transaction`,
          "is not a job's option: pass the transaction to firm.batch(jobs, { transaction })",
        );
      if (options.key !== undefined)
        throw new InvalidBatchError(
          `${place}.options.key`,
          "is not supported in a batch: a batch's jobs cannot be unique",
        );
    }
    return { name: spec.name, args: spec.args, defaults, ...(options === undefined ? {} : { options }) };
  });
}

/**
 * Check a callback (`path`: `batch.onFinish`…) and work out the job it will enqueue: its
 * arguments are validated against its schema now and stored, with its queue, priority and keys.
 */
export async function storedCallback(registry: DeclaredJobs, callback: unknown, path: string): Promise<StoredCallback> {
  const spec = checkShape(callback, path, CALLBACK_KEYS, "{ name, args }") as BatchCallbackSpec;
  const defaults = declaredOptions(registry, spec.name, path);
  const value =
    defaults.schema === null ? spec.args : await validateArguments(spec.name, defaults.schema, spec.args, "enqueue");
  return {
    name: spec.name,
    arguments: serializeArguments(spec.name, spec.args),
    queue: defaults.queue,
    priority: defaults.priority,
    concurrencyKey: defaults.concurrency ? concurrencyKeyFor(spec.name, defaults.concurrency, value) : null,
    rateLimitKey: defaults.rateLimit ? rateLimitKeyFor(spec.name, defaults.rateLimit, value) : null,
  };
}

/**
 * Write a new batch: its row (counts and callbacks), its jobs and their memberships, in one
 * transaction (the caller's, when `transaction` is given). Returns the batch's id and one result
 * per job. A job dropped by its concurrency limit, or cancelled at once (a `dependsOn` job had
 * failed), counts as cancelled.
 */
export async function writeBatch(
  database: Database,
  policies: JobPolicies,
  requests: readonly EnqueueRequest[],
  callbacks: BatchCallbacks,
  transaction: EnqueueTransaction | undefined,
): Promise<{ id: number; jobs: EnqueueResult[] }> {
  let id = 0;
  const text = JSON.stringify(callbacks);
  const jobs = await enqueueJobs(database, policies, requests, transaction, {
    async open(trx: Db, now: Date) {
      id = await insertBatch(trx, requests.length, text, now);
      return id;
    },
    async grow() {},
  });
  return { id, jobs };
}

/**
 * Add jobs to batch `batchId` (`context.batch.add`, from a job of the batch while it runs, so the
 * batch has not ended): they are written, and the batch's counts raised under its row lock, in one
 * transaction. A batch that has ended already is a BatchEndedError, and nothing is written.
 */
export async function addToBatch(
  database: Database,
  policies: JobPolicies,
  batchId: number,
  requests: readonly EnqueueRequest[],
): Promise<EnqueueResult[]> {
  return enqueueJobs(database, policies, requests, undefined, {
    async open() {
      return batchId;
    },
    async grow(trx: Db, count: number, now: Date) {
      const [batch] = await lockBatches(trx, database.dialect, [batchId]);
      if (batch === undefined || batch.state !== "pending") throw new BatchEndedError(batchId);
      await writeBatchCounts(
        trx,
        batchId,
        { ...batch, total: batch.total + count, pending: batch.pending + count },
        now,
      );
    },
  });
}

function checkShape(value: unknown, path: string, keys: ReadonlySet<string>, shape: string): { name: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidBatchError(path, `must be an object ${shape}, got ${shown(value)}`);
  for (const key of Object.keys(value))
    if (!keys.has(key)) throw new InvalidBatchError(path, `has an unknown key "${key}" (expected ${shape})`);
  const { name } = value as { name?: unknown };
  if (name === undefined) throw new InvalidBatchError(`${path}.name`, "is missing");
  try {
    checkJobName(name);
  } catch (error) {
    throw new InvalidBatchError(`${path}.name`, (error as Error).message);
  }
  return value as { name: string };
}

/** The declared defaults of a job of a batch (or a callback): see workflowJobOptions. */
function declaredOptions(registry: DeclaredJobs, name: string, path: string): ResolvedJobOptions {
  return workflowJobOptions(registry, name, "a batch's", (problem) => new InvalidBatchError(`${path}.name`, problem));
}
