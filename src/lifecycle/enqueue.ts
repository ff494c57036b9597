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
import { JobMoves } from "./job-moves.js";
import { insertJobs, type NewJob } from "../models/job.js";
import { serializeArguments } from "../serialization.js";
import { appTransactionConnection, type EnqueueTransaction } from "../database/app-transaction.js";
import { bridgeKysely, singleConnection } from "../database/bridge.js";
import { emitEnqueued } from "./enqueue-events.js";
import { jobTracing } from "../tracing.js";

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
 * (nothing of it stays in the database). Every argument is serialized, every option checked
 * and every concurrency key computed before anything is written, so a bad request leaves the
 * database untouched.
 */
export async function enqueueJobs(
  database: Database,
  policies: JobPolicies,
  requests: readonly EnqueueRequest[],
  transaction?: EnqueueTransaction,
): Promise<(number | null)[]> {
  const now = database.clock.now();
  const prepared = requests.map((request) => prepareJob(request, now));
  if (prepared.length === 0) return [];
  // The producer span's context goes with every job, for the attempt's span to join its trace.
  const span = (await jobTracing())?.startEnqueue(prepared);
  const traceContext = span?.traceContext ?? null;
  const jobs = traceContext === null ? prepared : prepared.map((job) => ({ ...job, traceContext }));
  try {
    const ids = await writeJobs(database, policies, jobs, now, transaction);
    span?.end(ids);
    return ids;
  } catch (error) {
    span?.end(null, error);
    throw error;
  }
}

/** Write prepared jobs (see {@link enqueueJobs}), then tell the event listeners. */
async function writeJobs(
  database: Database,
  policies: JobPolicies,
  jobs: readonly NewJob[],
  now: Date,
  transaction: EnqueueTransaction | undefined,
): Promise<(number | null)[]> {
  // The ids the jobs were written with, discarded ones too (set on each try: a transaction may run again).
  let written: readonly number[] = [];
  const moves = JobMoves.for(policies.events);
  const write = async (trx: Db) => {
    moves?.reset();
    const ids = await insertJobs(trx, jobs, now);
    const { discarded } = await dispatchJobs(
      trx,
      jobs.map((job, index) => ({ ...job, id: ids[index]! })),
      now,
      dispatchContext(database, policies, moves),
    );
    written = ids;
    if (discarded.length === 0) return ids;
    const gone = new Set(discarded);
    return ids.map((id) => (gone.has(id) ? null : id));
  };
  // Inside the caller's transaction the jobs exist only once it commits, which only the caller
  // knows; on PostgreSQL the commit itself wakes workers (see migration 004).
  if (transaction !== undefined) {
    const connection = await appTransactionConnection(transaction, database.dialect.name);
    const ids = await write(bridgeKysely(database.dialect.name, singleConnection(connection)));
    emitEnqueued(policies.events, jobs, ids, written);
    moves?.emit(policies.events);
    return ids;
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
  emitEnqueued(policies.events, jobs, ids, written);
  moves?.emit(policies.events);
  return ids;
}

function prepareJob(request: EnqueueRequest, now: Date): NewJob {
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
      ? concurrencyKeyFor(request.name, request.defaults.concurrency, request.args)
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
