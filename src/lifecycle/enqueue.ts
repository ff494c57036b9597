import { concurrencyKeyFor } from "../definitions/concurrency-options.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { toMilliseconds } from "../duration.js";
import { checkStorableDate } from "../date-range.js";
import { ConfigurationError } from "../errors.js";
import { ENQUEUE_OPTION_KEYS, type EnqueueOptions, type ResolvedJobOptions } from "../definitions/job-definition.js";
import { checkPriority, checkQueueName, rejectUnknownKeys } from "../option-checks.js";
import { dispatchContext, dispatchJobs, type DispatchContext } from "./job-dispatch.js";
import { JobMoves } from "./job-moves.js";
import { deleteJobs, insertJobs, type DispatchableJob, type NewJob } from "../models/job.js";
import { jobKeyClaim, type JobKeyClaim } from "../definitions/unique-options.js";
import { created, DROPPED, type EnqueueResult } from "./enqueue-result.js";
import { admitKeyedJobs, type KeyedJob } from "./unique-admission.js";
import { serializeArguments } from "../serialization.js";
import { appTransactionConnection, type EnqueueTransaction } from "../database/app-transaction.js";
import { bridgeKysely, singleConnection } from "../database/bridge.js";
import type { JobEvents } from "../job-events.js";
import { validateArguments } from "../definitions/argument-validation.js";

/** One job to write: its name, arguments, and the options that decide queue, priority and time. */
export interface EnqueueRequest {
  readonly name: string;
  readonly args: unknown;
  readonly defaults: ResolvedJobOptions;
  readonly options?: EnqueueOptions;
}

/**
 * Write jobs and route them (ready, scheduled or blocked) in one transaction, returning one
 * {@link EnqueueResult} per request, in order: created, matched by its unique key (a duplicate,
 * or a waiting job it replaced), or dropped by its concurrency limit (nothing of it stays in the
 * database). Every argument is validated against its job's schema and serialized, every option
 * checked and every key computed before anything is written, so a bad request leaves the
 * database untouched.
 */
export async function enqueueJobs(
  database: Database,
  policies: JobPolicies,
  requests: readonly EnqueueRequest[],
  transaction?: EnqueueTransaction,
): Promise<EnqueueResult[]> {
  // Only jobs with a schema wait for validation: the common path stays synchronous up to the write.
  const values = requests.some((request) => request.defaults.schema !== null) ? await validateRequests(requests) : null;
  const now = database.clock.now();
  const jobs = requests.map((request, index) => prepareJob(request, now, values ? values[index] : request.args));
  if (jobs.length === 0) return [];
  // The ids the jobs were written with, dropped ones too (set on each try: a transaction may run again).
  let written: readonly number[] = [];
  const moves = JobMoves.for(policies.events);
  const write = async (trx: Db) => {
    moves?.reset();
    const { results, ids } = await writeJobs(trx, jobs, now, dispatchContext(database, policies, moves));
    written = ids;
    return results;
  };
  // Inside the caller's transaction the jobs exist only once it commits, which only the caller
  // knows; on PostgreSQL the commit itself wakes workers (see migration 004).
  if (transaction !== undefined) {
    const connection = await appTransactionConnection(transaction, database.dialect.name);
    const results = await write(
      database.tableNames.apply(bridgeKysely(database.dialect.name, singleConnection(connection))),
    );
    emitEnqueued(policies.events, jobs, results, written);
    moves?.emit(policies.events);
    return results;
  }
  const { enqueueReady } = database.dialect;
  // Jobs due now without a concurrency key or a unique key only become ready: the database's
  // single statement does that where it has one. Everything else goes through writeJobs.
  const simple =
    enqueueReady !== undefined &&
    jobs.every(
      (job) => job.concurrencyKey === null && job.keyClaim === null && job.scheduledAt.getTime() <= now.getTime(),
    );
  const results = simple
    ? (await enqueueReady(database.db, { jobs, now })).map(created)
    : await database.writeTransaction(write);
  if (results.some((result, index) => result.status !== "dropped" && jobs[index]!.scheduledAt <= now))
    database.jobsReady.notify();
  emitEnqueued(policies.events, jobs, results, written);
  moves?.emit(policies.events);
  return results;
}

/**
 * Tell listeners of the jobs created (`job.enqueued`) and of those dropped on a concurrency
 * conflict (`job.discarded`): `results` is what enqueue returns, `written` the ids the jobs were
 * inserted with (a job matched by its unique key is neither: the job it matched is told of
 * when it was created).
 */
function emitEnqueued(
  events: JobEvents,
  jobs: readonly NewJob[],
  results: readonly EnqueueResult[],
  written: readonly number[],
): void {
  const enqueued = events.has("job.enqueued");
  const discarded = events.has("job.discarded");
  if (!enqueued && !discarded) return;
  jobs.forEach(({ className: job, queueName: queue, priority, scheduledAt }, index) => {
    const result = results[index]!;
    if (result.status === "created") {
      if (enqueued) events.emit("job.enqueued", { jobId: result.id, job, queue, priority, scheduledAt });
    } else if (result.status === "dropped" && discarded && written[index] !== undefined) {
      events.emit("job.discarded", { jobId: written[index], job, queue, reason: "concurrency" });
    }
  });
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

/** Insert the jobs, settle their unique keys, and dispatch the ones created. */
async function writeJobs(
  trx: Db,
  jobs: readonly PreparedJob[],
  now: Date,
  context: DispatchContext,
): Promise<{ results: EnqueueResult[]; ids: number[] }> {
  const ids = await insertJobs(trx, jobs, now);
  const keyed: KeyedJob[] = [];
  jobs.forEach((job, index) => {
    if (job.keyClaim !== null)
      keyed.push({ index, id: ids[index]!, jobName: job.className, claim: job.keyClaim, ...job });
  });
  const { matched, replacedInCall } = await admitKeyedJobs(trx, context, keyed, now);
  if (matched.size > 0)
    await deleteJobs(
      trx,
      [...matched.keys()].map((index) => ids[index]!),
    );
  const toDispatch: DispatchableJob[] = [];
  for (const [index, job] of jobs.entries()) {
    if (matched.has(index)) continue;
    const replacement = replacedInCall.get(index);
    if (replacement !== undefined) await rewriteJob(trx, ids[index]!, replacement, now);
    toDispatch.push({ ...job, id: ids[index]!, scheduledAt: replacement?.scheduledAt ?? job.scheduledAt });
  }
  const { discarded } = await dispatchJobs(trx, toDispatch, now, context);
  const dropped = new Set(discarded);
  return { ids, results: ids.map((id, index) => matched.get(index) ?? (dropped.has(id) ? DROPPED : created(id))) };
}

/** A job of this call replaced by a later one of the same call (unique mode `replace`). */
async function rewriteJob(
  trx: Db,
  id: number,
  change: { readonly arguments: string; readonly scheduledAt: Date },
  now: Date,
): Promise<void> {
  await trx
    .updateTable("firm_queue_jobs")
    .set({ arguments: change.arguments, scheduled_at: change.scheduledAt, updated_at: now })
    .where("id", "=", id)
    .execute();
}

/** A job ready to insert, with the unique key it will try to take. */
interface PreparedJob extends NewJob {
  readonly keyClaim: JobKeyClaim | null;
}

/** The row to write for one request; `value` is its arguments as its schema made them. */
function prepareJob(request: EnqueueRequest, now: Date, value: unknown): PreparedJob {
  const options = request.options ?? {};
  rejectUnknownKeys(options, ENQUEUE_OPTION_KEYS, `enqueue("${request.name}") option`);
  const keyClaim = jobKeyClaim(request.name, request.defaults.unique, value, options.key);
  return {
    keyClaim,
    jobKey: keyClaim?.key ?? null,
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
