import { setMaxListeners } from "node:events";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import { toDate } from "../database/schema.js";
import { JobNotImplementedError, TimeoutError, UnknownJobError } from "../errors.js";
import { validateArguments } from "../definitions/argument-validation.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import type { Logger } from "../logger.js";
import { FinishBatcher } from "./finish-batcher.js";
import { failClaimedJob, finishClaimedJobs, releaseClaims, releaseKeptSlot } from "../lifecycle/claimed-jobs.js";
import type { FailedAttemptOutcome } from "../lifecycle/failed-attempt.js";
import { type ClaimedJob, markedAtClaim } from "../database/claimed-job.js";
import { runWithTimeout } from "./job-timeout.js";
import { LateHandler } from "./late-handler.js";
import { JobAbort } from "./job-abort.js";
import { jobContext, type BatchAdder, type DependencyReader } from "./job-context.js";
import { addToBatch, batchRequests } from "../lifecycle/batch-enqueue.js";
import { readDependencyResults } from "../lifecycle/dependency-results.js";
import { persistently } from "./persistent-write.js";
import { deserializeArguments } from "../serialization.js";
import { attemptOf } from "./job-event-emits.js";
import { emitFailure } from "../lifecycle/failure-events.js";
import { runThroughMiddleware } from "../definitions/job-middleware.js";
import { CancelledSignal } from "./cancel-watch.js";
import { recordCancelledClaim } from "../lifecycle/job-cancel.js";
import { encodeProgress, encodeResult } from "./job-result.js";
import { ProgressReporter } from "./progress-reporter.js";
import { writeProgress } from "../models/job-progress.js";
import { jobTracing, loadedJobTracing } from "../tracing.js";
import { rateLimitedFor } from "../rate-limited-error.js";
import { releaseRateLimited } from "../lifecycle/rate-limited-release.js";

/** How one claimed job ended, seen from the process that ran it. */
export type RunOutcome = "finished" | "failed" | "released" | "cancelled" | "lost";

/** Why a job's AbortSignal fired because its worker is shutting down. */
export class ShutdownSignal extends Error {
  constructor() {
    super("The worker is shutting down");
    this.name = "ShutdownSignal";
  }
}

/** Runs claimed jobs for one process and records how each ended. */
export class JobRunner {
  /** Successful attempts are recorded in batches: many per transaction on a busy worker. */
  private readonly finished: FinishBatcher;
  /** Fired when the process can wait no longer for outcome writes that keep failing. */
  private readonly giveUp = new AbortController();
  /** Writes what handlers report through `context.progress`, throttled. */
  private readonly progress: ProgressReporter;
  /** `context.dependencyResults()` of every job this runner runs. */
  private readonly dependencies: DependencyReader;
  /** `context.batch.add` of every job of a batch this runner runs. */
  private readonly batches: BatchAdder;

  constructor(
    private readonly database: Database,
    private readonly registry: JobRegistry,
    private readonly policies: JobPolicies,
    private readonly processId: number,
    preserveFinishedJobs: boolean,
    private readonly logger: Logger,
  ) {
    // Every job whose outcome write keeps failing sleeps between retries on this one signal, one
    // listener each and removed when the sleep ends: as many at once as jobs were running when
    // the database went away, which can pass Node's default of 10 without anything leaking.
    setMaxListeners(0, this.giveUp.signal);
    this.progress = new ProgressReporter((values) => writeProgress(database.db, values), logger);
    this.dependencies = (jobId) => readDependencyResults(database.db, jobId);
    this.batches = async (batchId, jobs) =>
      addToBatch(database, policies, batchId, batchRequests(registry, jobs, "context.batch.add"));
    this.finished = new FinishBatcher(
      (jobs, startedIds) => finishClaimedJobs(database, policies, processId, jobs, preserveFinishedJobs, startedIds),
      (jobIds, error) =>
        logger.warn("could not mark claims as started; the marks go with the next finish batch", {
          processId,
          jobIds,
          error,
        }),
    );
  }

  /**
   * Run the job's handler and record the outcome. A handler that stops because the worker is
   * shutting down puts the job back in line; "lost" means the claim was taken away meanwhile
   * (crash recovery decided this process was gone), so the outcome was not recorded. Recording
   * is retried until it succeeds (see {@link persistently}); `onSettled` hears when the handler
   * itself has ended, before that, and whether the outcome to record is putting the job back in
   * line (a handler stopped by the shutdown) rather than one that counts its run.
   */
  async run(
    job: ClaimedJob,
    abort: JobAbort | AbortSignal,
    onSettled?: (putsBack: boolean) => void,
  ): Promise<RunOutcome> {
    const signal = abort instanceof JobAbort ? abort : new JobAbort(abort);
    const jobId = Number(job.id);
    // A job the claim took for a free slot is marked started already; one from the buffer is
    // marked with the next finish batch (not waited for): a crash once that commits costs it an
    // attempt, a crash before puts it back in line as it was (docs/reliability.md).
    if (!markedAtClaim(job)) this.finished.started(jobId);
    const fields = { jobId, job: job.class_name, queue: job.queue_name, attempt: job.attempts + 1 };
    const { events } = this.policies;
    // Timing for the events, on the database's clock (the one the due time was written with).
    const run =
      events.has("job.started") || events.has("job.finished")
        ? {
            ...fields,
            processId: this.processId,
            dueAt: toDate(job.scheduled_at ?? job.created_at),
            startedAt: this.database.clock.now(),
          }
        : undefined;
    if (run !== undefined && events.has("job.started")) events.emit("job.started", run);
    const started = performance.now();
    let failure: unknown;
    let succeeded = false;
    const late = new LateHandler();
    try {
      const result = encodeResult(job.class_name, jobId, await this.traced(job, () => this.perform(job, signal, late)));
      if (result !== null) job.result = result;
      succeeded = true;
    } catch (error) {
      failure = error;
    }
    this.progress.settle(jobId);
    const ms = Math.round(performance.now() - started);
    onSettled?.(!succeeded && signal.aborted && signal.reason instanceof ShutdownSignal);
    const record = <T>(write: () => Promise<T>): Promise<T> =>
      persistently(write, this.giveUp.signal, this.logger, fields);
    if (signal.aborted && signal.reason instanceof CancelledSignal) {
      // Cancelled: recorded so whether the handler then returned or threw.
      const recorded = await record(() => recordCancelledClaim(this.database, this.policies, jobId, this.processId));
      if (!recorded) return this.lost(fields);
      this.logger.info("job cancelled while running", { ...fields, ms });
      this.tellCancelled(job, true);
      return "cancelled";
    }
    if (succeeded) {
      const recorded = await record(() => this.finished.finish(job));
      if (!recorded) return this.lost(fields);
      // No log line of its own: `logJobOutcomes` adds one (facade/job-outcome-log.ts).
      if (run !== undefined && events.has("job.finished")) events.emit("job.finished", { ...run, durationMs: ms });
      return "finished";
    }
    if (signal.aborted && signal.reason instanceof ShutdownSignal) {
      const released = await record(() => releaseClaims(this.database, this.policies, this.processId, [jobId]));
      this.logger.info("job stopped for shutdown; back in its queue", { ...fields, ms });
      this.released([job], released, true);
      return "released";
    }
    const retryInMs = rateLimitedFor(failure);
    if (retryInMs !== null) return this.rateLimited(job, failure, retryInMs, { ...fields, ms }, record);
    // A handler past its timeout may still be running: its attempt fails now, but it keeps the
    // job's concurrency slot until it really ends, or the key's limit would be exceeded.
    const keepSlot = late.timedOut && job.concurrency_key !== null;
    const outcome = await record(() =>
      failClaimedJob(this.database, this.policies, jobId, this.processId, failure, { keepSlot }),
    );
    if (keepSlot && outcome)
      void late
        .whenEnded()
        .then(() => record(() => releaseKeptSlot(this.database, this.policies, job)))
        .catch((error: unknown) =>
          this.logger.error(
            "could not give back a timed-out job's concurrency slot; it frees when the semaphore expires",
            { ...fields, error },
          ),
        );
    if (!outcome) return this.lost(fields);
    this.logFailure(outcome, { ...fields, ms, error: failure });
    emitFailure(events, outcome, { ...fields, processId: this.processId, error: failure, durationMs: ms });
    return "failed";
  }

  /** Tell the `job.released` listeners of claimed jobs a stopping worker put back in line (`released`: their ids). */
  released(jobs: Iterable<ClaimedJob>, released: readonly number[], started: boolean): void {
    const { events } = this.policies;
    if (!events.has("job.released") || released.length === 0) return;
    const ids = new Set(released);
    for (const job of jobs)
      if (ids.has(Number(job.id))) events.emit("job.released", { ...attemptOf(job, this.processId), started });
  }

  /** Tell the `job.claimed` listeners of jobs this process just claimed. */
  claimed(jobs: readonly ClaimedJob[]): void {
    const { events } = this.policies;
    if (!events.has("job.claimed")) return;
    for (const job of jobs) events.emit("job.claimed", attemptOf(job, this.processId));
  }

  /** Record a claimed job cancelled before it started (taken out of the worker's buffer); no attempt counted. */
  async cancelUnstarted(job: ClaimedJob): Promise<void> {
    const jobId = Number(job.id);
    const fields = { jobId };
    try {
      const recorded = await persistently(
        () => recordCancelledClaim(this.database, this.policies, jobId, this.processId, false),
        this.giveUp.signal,
        this.logger,
        fields,
      );
      if (!recorded) return;
      this.logger.info("claimed job cancelled before it started", fields);
      this.tellCancelled(job, false);
    } catch (error) {
      this.logger.error("could not record a cancelled job that never started; it stays claimed", { ...fields, error });
    }
  }

  /** Tell the `job.cancelled` listeners of a claimed job this process recorded cancelled. */
  private tellCancelled(job: ClaimedJob, started: boolean): void {
    const { events } = this.policies;
    if (events.has("job.cancelled")) events.emit("job.cancelled", { ...attemptOf(job, this.processId), started });
  }

  /** Write the progress handlers reported and not yet written (a drain or a worker ending). */
  flushProgress(): Promise<void> {
    return this.progress.flush();
  }

  /** Stop retrying outcome writes that fail: the process is stopping and can wait no longer. */
  stopRetrying(): void {
    this.giveUp.abort();
  }

  private logFailure({ decision, maxAttempts, retryAt }: FailedAttemptOutcome, fields: Record<string, unknown>): void {
    switch (decision.action) {
      case "retry":
        this.logger.warn("job attempt failed; retry scheduled", {
          ...fields,
          maxAttempts,
          retryInMs: decision.delayMs,
          retryAt: retryAt?.toISOString(),
        });
        return;
      case "abandon":
        this.logger.warn(
          "job attempt failed with an error its abandonOn matches; job abandoned (recorded as finished)",
          fields,
        );
        return;
      case "fail":
        if (decision.policyError !== undefined) {
          this.logger.error("job's retry policy threw while judging a failure; the job is failed instead of retried", {
            ...fields,
            policyError: decision.policyError,
          });
        }
        this.logger.error(`job failed (${decision.reason}); moved to failed jobs`, { ...fields, maxAttempts });
        return;
    }
  }

  /** Run the attempt inside its consumer span when OpenTelemetry is installed (see tracing.ts). */
  private traced<T>(job: ClaimedJob, attempt: () => Promise<T>): Promise<T> {
    const tracing = loadedJobTracing();
    if (tracing === null) return attempt();
    if (tracing === undefined) return jobTracing().then(() => this.traced(job, attempt));
    return tracing.runAttempt(
      {
        jobId: Number(job.id),
        name: job.class_name,
        queue: job.queue_name,
        attempt: job.attempts + 1,
        traceContext: job.trace_context ?? null,
      },
      attempt,
    );
  }

  /** Run the handler; `late` hears whether it outlived its timeout, and when it then ended. */
  private async perform(job: ClaimedJob, signal: JobAbort, late: LateHandler): Promise<unknown> {
    const definition = this.registry.get(job.class_name);
    if (definition === undefined) throw new UnknownJobError(job.class_name, this.registry.implementedNames());
    const { handler } = definition;
    const { schema } = definition.options;
    if (handler === null) throw new JobNotImplementedError(job.class_name, this.registry.implementedNames());
    // A job stored by an older version of the app may no longer match the schema: fail it before
    // the handler starts rather than halfway through.
    const stored = deserializeArguments(job.arguments);
    const jobId = Number(job.id);
    const args = schema === null ? stored : await validateArguments(job.class_name, schema, stored, "run", jobId);
    const progress = (value: unknown) => this.progress.report(jobId, encodeProgress(job.class_name, jobId, value));
    const { timeout } = definition.options;
    const middleware = this.registry.middlewareFor(definition);
    return runWithTimeout(
      (handlerSignal) => {
        const full = jobContext(job, this.logger, progress, handlerSignal, this.dependencies, this.batches);
        if (middleware.length === 0) return handler(args, full);
        // The job's result is what the handler returned, whatever the middleware returns.
        let result: unknown;
        return runThroughMiddleware(middleware, { ...full, args }, async () => {
          result = await handler(args, full);
          return result;
        }).then(() => result);
      },
      () => signal.signal,
      timeout,
      () => {
        late.timedOut = true;
        const { events } = this.policies;
        if (events.has("job.timed_out"))
          events.emit("job.timed_out", { ...attemptOf(job, this.processId), timeoutMs: timeout! });
        return new TimeoutError(job.class_name, jobId, timeout!);
      },
      (end) => {
        late.ended();
        this.logger.warn("a timed-out handler has now ended; its outcome was ignored (the attempt already failed)", {
          jobId,
          job: job.class_name,
          attempt: job.attempts + 1,
          ...(end.ok ? { result: "returned" } : { result: "threw", error: end.error }),
        });
      },
    );
  }

  /** The handler threw a RateLimitedError: back to waiting, no attempt counted, its budget closed. */
  private async rateLimited(
    job: ClaimedJob,
    error: unknown,
    retryInMs: number,
    fields: Record<string, unknown>,
    record: <T>(write: () => Promise<T>) => Promise<T>,
  ): Promise<RunOutcome> {
    const jobId = Number(job.id);
    const outcome = await record(() =>
      releaseRateLimited(this.database, this.policies, jobId, this.processId, error, retryInMs),
    );
    if (outcome === null) return this.lost(fields);
    this.logger.info("job rate limited; back to waiting with no attempt counted", {
      ...fields,
      budget: outcome.budget,
      retryInMs,
      until: outcome.until.toISOString(),
    });
    return "released";
  }

  private lost(fields: Record<string, unknown>): RunOutcome {
    this.logger.warn("job's claim was taken from this process before it ended; its outcome was not recorded", fields);
    return "lost";
  }
}
