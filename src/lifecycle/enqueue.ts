import { concurrencyKeyFor } from "../definitions/concurrency-options.js";
import { rateLimitKeyFor } from "../definitions/rate-limit-options.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { toMilliseconds } from "../duration.js";
import { checkStorableDate } from "../date-range.js";
import { ConfigurationError, InvalidDependencyError } from "../errors.js";
import { ENQUEUE_OPTION_KEYS, type EnqueueOptions, type ResolvedJobOptions } from "../definitions/job-definition.js";
import { checkPriority, checkQueueName, rejectUnknownKeys } from "../option-checks.js";
import { dispatchContext } from "./job-dispatch.js";
import { JobMoves } from "./job-moves.js";
import { jobKeyClaim } from "../definitions/unique-options.js";
import { created, type EnqueueResult } from "./enqueue-result.js";
import { insertAndRoute, type PreparedJob } from "./job-insertion.js";
import { emitEnqueued } from "./enqueue-events.js";
import { jobTracing } from "../tracing.js";
import { serializeArguments } from "../serialization.js";
import { appTransactionConnection, type EnqueueTransaction } from "../database/app-transaction.js";
import { bridgeKysely, singleConnection } from "../database/bridge.js";
import { validateArguments } from "../definitions/argument-validation.js";
import {
  checkDependencies,
  checkFailurePolicy,
  MAX_DEPENDENCIES,
  type JobDependencies,
} from "../definitions/dependency-options.js";
import type { PlannedDependencies } from "./dependency-admission.js";
import { countBatchEnds } from "./batch-progress.js";

/**
 * The batch the jobs of an enqueue join (`firm.batch`, `context.batch.add`), inside the write's
 * transaction: `open` returns its id before the jobs are written (writing a new batch's row, whose
 * counts already include them); `grow` runs after, with how many were written (locking an existing
 * batch's row and adding them to its counts). Jobs that ended as they were written (cancelled or
 * dropped) are counted after both.
 */
export interface BatchMembership {
  open(trx: Db, now: Date): Promise<number>;
  grow(trx: Db, count: number, now: Date): Promise<void>;
}

/** One job to write: its name, arguments, and the options that decide queue, priority and time. */
export interface EnqueueRequest {
  readonly name: string;
  readonly args: unknown;
  readonly defaults: ResolvedJobOptions;
  readonly options?: EnqueueOptions;
  /**
   * Places (in the same call's list, each before this one) of jobs this one waits for besides
   * its `dependsOn`: a flow's children.
   */
  readonly inCall?: readonly number[];
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
  batch?: BatchMembership,
): Promise<EnqueueResult[]> {
  // Only jobs with a schema wait for validation: the common path stays synchronous up to the write.
  const values = requests.some((request) => request.defaults.schema !== null) ? await validateRequests(requests) : null;
  const now = database.clock.now();
  const prepared = requests.map((request, index) => prepareJob(request, now, values ? values[index] : request.args));
  if (prepared.length === 0) return [];
  // The producer span's context goes with every job, for the attempt's span to join its trace.
  const span = (await jobTracing())?.startEnqueue(prepared);
  const traceContext = span?.traceContext ?? null;
  const jobs = traceContext === null ? prepared : prepared.map((job) => ({ ...job, traceContext }));
  try {
    const results = await writeJobs(database, policies, jobs, now, transaction, batch);
    span?.end(results.map((result) => result.id));
    return results;
  } catch (error) {
    span?.end(null, error);
    throw error;
  }
}

/** Write prepared jobs (see {@link enqueueJobs}), then tell the event listeners. */
async function writeJobs(
  database: Database,
  policies: JobPolicies,
  jobs: readonly PreparedJob[],
  now: Date,
  transaction: EnqueueTransaction | undefined,
  batch: BatchMembership | undefined,
): Promise<EnqueueResult[]> {
  // The ids the jobs were written with, dropped ones too (set on each try: a transaction may run again).
  let written: readonly number[] = [];
  const moves = JobMoves.for(policies.events);
  const write = async (trx: Db) => {
    moves?.reset();
    const context = dispatchContext(database, policies, moves);
    if (batch === undefined) {
      const { results, ids } = await insertAndRoute(trx, jobs, now, context);
      written = ids;
      return results;
    }
    // A batch's jobs are written marked as having dependents, so that every way they end goes
    // through the end paths that tell their batch (see dependency-release.ts).
    const batchId = await batch.open(trx, now);
    const members = jobs.map((job) => ({ ...job, batchId, hasDependents: true }));
    const { results, ids, endedAtInsert } = await insertAndRoute(trx, members, now, context);
    await batch.grow(trx, ids.length, now);
    await countBatchEnds(trx, context, endedAtInsert, "cancelled", now);
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
  // single statement does that where it has one. Everything else goes through insertAndRoute.
  const simple =
    enqueueReady !== undefined &&
    batch === undefined &&
    jobs.every(
      (job) =>
        job.concurrencyKey === null &&
        job.keyClaim === null &&
        !job.dependencies &&
        !job.rateLimitKey &&
        job.scheduledAt.getTime() <= now.getTime(),
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
function prepareJob(request: EnqueueRequest, now: Date, value: unknown): PreparedJob {
  const options = request.options ?? {};
  rejectUnknownKeys(options, ENQUEUE_OPTION_KEYS, `enqueue("${request.name}") option`);
  const keyClaim = jobKeyClaim(request.name, request.defaults.unique, value, options.key);
  const what = `enqueue("${request.name}")`;
  const dependencies = withCallDependencies(
    checkDependencies(options.dependsOn, options.onDependencyFailure, what),
    request.inCall,
    options.onDependencyFailure,
    what,
  );
  return {
    dependencies,
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
    ...(request.defaults.rateLimit
      ? { rateLimitKey: rateLimitKeyFor(request.name, request.defaults.rateLimit, value) }
      : {}),
  };
}

/** A job's checked `dependsOn` joined with the jobs of the same call it waits for (a flow's children). */
function withCallDependencies(
  checked: JobDependencies | null,
  inCall: readonly number[] | undefined,
  onFailure: unknown,
  what: string,
): PlannedDependencies | null {
  if (inCall === undefined || inCall.length === 0) return checked;
  const ids = checked?.ids ?? [];
  if (ids.length + inCall.length > MAX_DEPENDENCIES)
    throw new InvalidDependencyError(
      `${what} option dependsOn`,
      `and the node's children make ${ids.length + inCall.length} dependencies: a job may have at most ${MAX_DEPENDENCIES}`,
    );
  return { ids, onFailure: checked?.onFailure ?? checkFailurePolicy(onFailure, what), inCall };
}

/**
 * Check the options of a bulk enqueue given no jobs: a bad option is refused whatever the list
 * holds, as it would be with jobs in it.
 */
export function checkEnqueueOptions(jobName: string, options: EnqueueOptions): void {
  rejectUnknownKeys(options, ENQUEUE_OPTION_KEYS, `enqueue("${jobName}") option`);
  if (options.queue !== undefined) checkQueueName(options.queue, "enqueue option queue");
  if (options.priority !== undefined) checkPriority(options.priority, "enqueue option priority");
  scheduledAt(options, new Date());
  jobKeyClaim(jobName, null, null, options.key);
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
