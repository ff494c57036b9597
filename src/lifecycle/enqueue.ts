import { concurrencyKeyFor } from "../definitions/concurrency-options.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { toMilliseconds } from "../duration.js";
import { checkStorableDate } from "../date-range.js";
import { ConfigurationError } from "../errors.js";
import { ENQUEUE_OPTION_KEYS, type EnqueueOptions, type ResolvedJobOptions } from "../definitions/job-definition.js";
import { checkPriority, checkQueueName, rejectUnknownKeys } from "../option-checks.js";
import { dispatchContext, dispatchJobs } from "./job-dispatch.js";
import { insertJobs, type NewJob } from "../models/job.js";
import { serializeArguments } from "../serialization.js";
import { appTransactionConnection, type EnqueueTransaction } from "../database/app-transaction.js";
import { bridgeKysely, singleConnection } from "../database/bridge.js";
import { validateArguments } from "../definitions/argument-validation.js";

/** One job to write: its name, arguments, and the options that decide queue, priority and time. */
export interface EnqueueRequest {
  readonly name: string;
  readonly args: unknown;
  readonly defaults: ResolvedJobOptions;
  readonly options?: EnqueueOptions;
}

/**
 * Write jobs and route them (ready, scheduled or blocked) in one transaction, returning their
 * ids in order, with null for a job discarded because its concurrency key had no free slot
 * (nothing of it stays in the database). Every argument is validated against its job's schema
 * and serialized, every option checked and every concurrency key computed before anything is
 * written, so a bad request leaves the database untouched.
 */
export async function enqueueJobs(
  database: Database,
  policies: JobPolicies,
  requests: readonly EnqueueRequest[],
  transaction?: EnqueueTransaction,
): Promise<(number | null)[]> {
  // Only jobs with a schema wait for validation: the common path stays synchronous up to the write.
  const values = requests.some((request) => request.defaults.schema !== null) ? await validateRequests(requests) : null;
  const now = database.clock.now();
  const jobs = requests.map((request, index) => prepareJob(request, now, values ? values[index] : request.args));
  if (jobs.length === 0) return [];
  const write = async (trx: Db) => {
    const ids = await insertJobs(trx, jobs, now);
    const { discarded } = await dispatchJobs(
      trx,
      jobs.map((job, index) => ({ ...job, id: ids[index]! })),
      now,
      dispatchContext(database, policies),
    );
    if (discarded.length === 0) return ids;
    const gone = new Set(discarded);
    return ids.map((id) => (gone.has(id) ? null : id));
  };
  // Inside the caller's transaction the jobs exist only once it commits, which only the caller
  // knows; on PostgreSQL the commit itself wakes workers (see migration 004).
  if (transaction !== undefined) {
    const connection = await appTransactionConnection(transaction, database.dialect.name);
    return write(bridgeKysely(database.dialect.name, singleConnection(connection)));
  }
  const { enqueueReady } = database.dialect;
  // Jobs due now without a concurrency key only become ready: the database's single statement
  // does that where it has one. Everything else is routed by dispatchJobs in a transaction.
  const simple =
    enqueueReady !== undefined &&
    jobs.every((job) => job.concurrencyKey === null && job.scheduledAt.getTime() <= now.getTime());
  const ids = simple ? await enqueueReady(database.db, { jobs, now }) : await database.writeTransaction(write);
  if (jobs.some((job, index) => ids[index] !== null && job.scheduledAt.getTime() <= now.getTime()))
    database.jobsReady.notify();
  return ids;
}

/**
 * The values the schemas make of the arguments (what the handler will see, and what concurrency
 * keys are computed from). The first invalid job in list order is reported, with its place when
 * there are several.
 */
async function validateRequests(requests: readonly EnqueueRequest[]): Promise<unknown[]> {
  const bulk = requests.length > 1;
  const results = await Promise.allSettled(
    requests.map((request, index) => {
      const { schema } = request.defaults;
      if (schema === null) return request.args;
      return validateArguments(request.name, schema, request.args, "enqueue", bulk ? index : undefined);
    }),
  );
  return results.map((result) => {
    if (result.status === "rejected") throw result.reason;
    return result.value;
  });
}

/** The row to write for one request; `value` is its arguments as its schema made them. */
function prepareJob(request: EnqueueRequest, now: Date, value: unknown): NewJob {
  const options = request.options ?? {};
  rejectUnknownKeys(options, ENQUEUE_OPTION_KEYS, `enqueue("${request.name}") option`);
  return {
    className: request.name,
    queueName:
      options.queue === undefined ? request.defaults.queue : checkQueueName(options.queue, "enqueue option queue"),
    priority:
      options.priority === undefined
        ? request.defaults.priority
        : checkPriority(options.priority, "enqueue option priority"),
    scheduledAt: scheduledAt(options, now),
    arguments: serializeArguments(request.name, request.args),
    concurrencyKey: request.defaults.concurrency
      ? concurrencyKeyFor(request.name, request.defaults.concurrency, value)
      : null,
  };
}

function scheduledAt(options: EnqueueOptions, now: Date): Date {
  if (options.at !== undefined && options.wait !== undefined) {
    throw new ConfigurationError("enqueue options wait and at cannot be used together");
  }
  if (options.at !== undefined) {
    if (!(options.at instanceof Date) || Number.isNaN(options.at.getTime())) {
      throw new ConfigurationError(`enqueue option at must be a valid Date, got ${String(options.at)}`);
    }
    return checkStorableDate(options.at, "enqueue option at");
  }
  if (options.wait !== undefined)
    return checkStorableDate(
      new Date(now.getTime() + toMilliseconds(options.wait, "enqueue option wait")),
      "enqueue option wait (from now)",
    );
  return now;
}
