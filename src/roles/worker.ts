import { claimJobs } from "./claims.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import { JobRunner, ShutdownSignal } from "./job-runner.js";
import type { Logger } from "../logger.js";
import { claimedJobIds, releaseClaims } from "../lifecycle/claimed-jobs.js";
import type { JobRow } from "../models/job.js";
import { QueueSelector } from "./queue-selector.js";
import { Poller, UNTIL_WOKEN } from "../processes/poller.js";
import { ProcessRowGoneError } from "../errors.js";
import { sleep } from "../backoff.js";

/** How long a stopping worker waits past its timeout for the outcome writes of jobs that ran. */
const WRITE_GRACE_MS = 3000;

/** A worker's settings, defaults filled in. */
export interface WorkerSettings {
  readonly queues: string | readonly string[];
  /** Jobs run at once. */
  readonly concurrency: number;
  /** Sleep between polls when the queues are empty, in ms. */
  readonly pollingInterval: number;
}

/** What a worker needs from the process that hosts it. */
export interface WorkerDependencies {
  readonly database: Database;
  readonly registry: JobRegistry;
  readonly policies: JobPolicies;
  readonly processId: number;
  readonly preserveFinishedJobs: boolean;
  readonly logger: Logger;
  readonly onError: (error: unknown) => void;
  /** Told when a claim is refused because this process's row is gone. */
  readonly onProcessLost?: () => void;
}

/**
 * Claims jobs up to its free capacity and runs them concurrently in this process. It polls at
 * `pollingInterval` while the queues are empty; when a claim filled every free slot it sleeps
 * until a job ends, then claims again at once.
 */
export class Worker extends Poller {
  readonly selector: QueueSelector;
  private readonly runner: JobRunner;
  /** Jobs claimed and not yet recorded; `settled` once the handler has ended (only the write is left). */
  private readonly inFlight = new Map<
    number,
    { readonly abort: AbortController; readonly done: Promise<void>; settled: boolean }
  >();
  /** Fired to cut a graceful stop's wait short (SIGQUIT during a graceful stop). */
  private readonly hurried = new AbortController();
  private lastClaimFilledCapacity = false;
  /** A poll failed: a claim may have committed without this process hearing of it. */
  private mayHoldUnknownClaims = false;
  private stopHearingOfJobs: (() => Promise<void>) | undefined;

  constructor(
    readonly settings: WorkerSettings,
    private readonly deps: WorkerDependencies,
  ) {
    super({ logger: deps.logger, what: "worker", fields: () => ({ processId: deps.processId }) });
    this.selector = new QueueSelector(settings.queues);
    this.runner = new JobRunner(
      deps.database,
      deps.registry,
      deps.policies,
      deps.processId,
      deps.preserveFinishedJobs,
      deps.logger,
    );
  }

  get processId(): number {
    return this.deps.processId;
  }

  /** Ids of the jobs this worker is running now. */
  get runningJobIds(): number[] {
    return [...this.inFlight.keys()];
  }

  /** Start polling, and wake early whenever jobs may have become ready (see JobsReadySignal). */
  override start(): void {
    super.start();
    this.stopHearingOfJobs ??= this.deps.database.jobsReady.subscribe(
      () => {
        if (this.inFlight.size < this.settings.concurrency) this.wake();
      },
      (error) =>
        this.deps.logger.warn("lost the connection that hears of new jobs; polling until it is back", {
          processId: this.deps.processId,
          error,
        }),
    );
  }

  protected async poll(): Promise<number> {
    if (this.mayHoldUnknownClaims) await this.releaseUnknownClaims();
    const free = this.settings.concurrency - this.inFlight.size;
    if (free <= 0) return UNTIL_WOKEN;
    const jobs = await claimJobs(this.deps.database, this.selector, free, this.deps.processId, this.deps.onError);
    if (!this.isRunning) {
      // Stopped while claiming: hand the jobs straight back instead of starting them.
      await releaseClaims(
        this.deps.database,
        this.deps.policies,
        this.deps.processId,
        jobs.map((job) => Number(job.id)),
      );
      return 0;
    }
    for (const job of jobs) this.launch(job);
    this.lastClaimFilledCapacity = jobs.length === free;
    return this.lastClaimFilledCapacity ? UNTIL_WOKEN : this.settings.pollingInterval;
  }

  protected onPollError(error: unknown, repeated: boolean): number {
    if (error instanceof ProcessRowGoneError) {
      // Pruned while alive: claiming again would only be refused. Stop polling; the host stops
      // this role (jobs in flight cannot record their outcome: the stale-worker guard refuses).
      void this.stopPolling();
      this.deps.logger.warn("a claim was refused: this worker's process row is gone; it stops claiming", {
        processId: this.deps.processId,
      });
      this.deps.onProcessLost?.();
      return UNTIL_WOKEN;
    }
    this.mayHoldUnknownClaims = true;
    if (!repeated) this.deps.onError(error);
    return this.settings.pollingInterval;
  }

  /**
   * Stop claiming, fire every running job's AbortSignal, wait up to `timeout` ms for them to end,
   * then put the jobs whose handler is still running back in their queue (no attempt is
   * counted). A job whose handler has ended is never put back: its outcome is being written, and
   * the stop waits for that write (up to {@link WRITE_GRACE_MS} more if the database keeps
   * failing). Returns the ids of the jobs released.
   */
  async shutdown(timeout: number): Promise<number[]> {
    await this.stopHearingOfJobs?.();
    this.stopHearingOfJobs = undefined;
    await this.stopPolling();
    for (const { abort } of this.inFlight.values()) abort.abort(new ShutdownSignal());
    const everything = Promise.allSettled([...this.inFlight.values()].map((entry) => entry.done));
    const result = await Promise.race([everything.then(() => "done" as const), this.waitOrHurry(timeout)]);
    if (result === "done") return [];
    const stuck = [...this.inFlight].filter(([, entry]) => !entry.settled).map(([jobId]) => jobId);
    const released =
      stuck.length === 0 ? [] : await releaseClaims(this.deps.database, this.deps.policies, this.deps.processId, stuck);
    if (released.length > 0) {
      this.deps.logger.warn("shutdown timeout passed; jobs still running were put back in their queues", {
        jobIds: released,
        timeoutMs: timeout,
      });
    }
    const writing = [...this.inFlight.values()].filter((entry) => entry.settled).map((entry) => entry.done);
    if (writing.length > 0) {
      const giveUp = new AbortController();
      const written = await Promise.race([
        Promise.allSettled(writing).then(() => true),
        sleep(WRITE_GRACE_MS, giveUp.signal).then(() => false),
      ]);
      giveUp.abort();
      if (!written)
        this.deps.logger.error(
          "gave up waiting to record the outcome of jobs that ran; they stay claimed until this process is pruned",
          { jobIds: this.runningJobIds },
        );
    }
    this.runner.stopRetrying();
    return released;
  }

  /** Cut a graceful stop's wait for running jobs short: release them now (settled ones still get written). */
  hurry(): void {
    this.hurried.abort();
  }

  private async waitOrHurry(timeout: number): Promise<"timeout"> {
    await sleep(timeout, this.hurried.signal);
    return "timeout";
  }

  /**
   * After a failed poll, put back in line any claim this process holds but is not running: a
   * connection lost during COMMIT leaves the claim written while the worker saw only an error.
   * Safe because only this poller claims for this process, and every job it knows of is in flight.
   */
  private async releaseUnknownClaims(): Promise<void> {
    const unknown = (await claimedJobIds(this.deps.database.db, this.deps.processId)).filter(
      (jobId) => !this.inFlight.has(jobId),
    );
    if (unknown.length > 0) {
      const released = await releaseClaims(this.deps.database, this.deps.policies, this.deps.processId, unknown);
      this.deps.logger.warn(
        "claims this worker did not know it held (a claim's answer was lost) were put back in line",
        { processId: this.deps.processId, jobIds: released },
      );
    }
    this.mayHoldUnknownClaims = false;
  }

  private launch(job: JobRow): void {
    const jobId = Number(job.id);
    const abort = new AbortController();
    const entry = { abort, done: Promise.resolve(), settled: false };
    entry.done = this.runner
      .run(job, abort.signal, () => (entry.settled = true))
      .then(
        () => undefined,
        (error: unknown) => this.deps.onError(error),
      )
      .finally(() => {
        this.inFlight.delete(jobId);
        if (this.lastClaimFilledCapacity) this.wake();
      });
    this.inFlight.set(jobId, entry);
  }
}
