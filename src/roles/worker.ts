import { claimJobs } from "./claims.js";
import { type ClaimedJob, markedAtClaim } from "../database/claimed-job.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import { JobRunner, ShutdownSignal } from "./job-runner.js";
import type { Logger } from "../logger.js";
import { claimedJobIds, releaseClaims } from "../lifecycle/claimed-jobs.js";
import { QueueSelector } from "./queue-selector.js";
import { Poller, UNTIL_WOKEN } from "../processes/poller.js";
import { ProcessRowGoneError } from "../errors.js";
import { sleep } from "../backoff.js";
import { ClaimBuffer, defaultPrefetch } from "./claim-buffer.js";
import { CancelWatch, CancelledSignal } from "./cancel-watch.js";
import { RunningJobs } from "./running-jobs.js";
import { StrayClaimChecks } from "./stray-claims.js";
import { BudgetClaims } from "./budget-claims.js";
import { type QueueScope, scopeOfPatterns } from "../models/throttled-execution.js";

/** How long a stopping worker waits past its timeout for the outcome writes of jobs that ran. */
const WRITE_GRACE_MS = 3000;

/** A worker's settings, defaults filled in. */
export interface WorkerSettings {
  readonly queues: string | readonly string[];
  /** Jobs run at once. */
  readonly concurrency: number;
  /** Sleep between polls when the queues are empty, in ms. */
  readonly pollingInterval: number;
  /**
   * Jobs claimed ahead of free slots when there is a backlog, held in memory until a slot frees
   * (see {@link ClaimBuffer}). 0 claims only for free slots. Default {@link defaultPrefetch}.
   */
  readonly prefetch?: number;
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
 * Claims jobs and runs them concurrently in this process. It polls at `pollingInterval` while
 * the queues are empty. When there is a backlog it claims ahead, up to `prefetch` jobs beyond its
 * free slots, in one transaction per batch, and starts the next job from memory as each one ends;
 * it claims again once the buffer is half empty, so each claim carries many jobs.
 */
export class Worker extends Poller {
  readonly selector: QueueSelector;
  private readonly runner: JobRunner;
  /** Jobs started and not yet recorded (see RunningJobs: a slot frees before the write lands). */
  private readonly inFlight: RunningJobs;
  /** Fired to cut a graceful stop's wait short (SIGQUIT during a graceful stop). */
  private readonly hurried = new AbortController();
  /** Claimed jobs that have not started: started from memory as slots free up. */
  private readonly buffer: ClaimBuffer;
  private lastClaimFilledCapacity = false;
  /** Slots held for the jobs a claim under way marks started (see {@link forSlots}). */
  private reserved = 0;
  /** Whether a budget claim is under way (it holds the slots it asked for: see {@link slotFreed}). */
  private budgetClaiming = false;
  /** When to look for claims of this process it does not know of (after a failed claim). */
  private readonly strayClaims = new StrayClaimChecks();
  private stopHearingOfJobs: (() => Promise<void>) | undefined;
  /** Hears of cancelled jobs among this worker's claims. */
  private readonly cancels: CancelWatch;
  /** Rate-limit budgets: claimed apart, for free slots only (docs/rate-limits.md). */
  private readonly budgets: BudgetClaims;
  private readonly scope: QueueScope;

  constructor(
    readonly settings: WorkerSettings,
    private readonly deps: WorkerDependencies,
  ) {
    super({ logger: deps.logger, what: "worker", fields: () => ({ processId: deps.processId }) });
    this.selector = new QueueSelector(settings.queues);
    this.buffer = new ClaimBuffer(settings.prefetch ?? defaultPrefetch(settings.concurrency));
    this.scope = scopeOfPatterns(this.selector.patterns);
    this.budgets = new BudgetClaims(
      deps.database,
      settings.pollingInterval,
      deps.registry.names().some((name) => deps.registry.get(name)?.options.rateLimit),
    );
    this.runner = new JobRunner(
      deps.database,
      deps.registry,
      deps.policies,
      deps.processId,
      deps.preserveFinishedJobs,
      deps.logger,
    );
    this.inFlight = new RunningJobs(this.runner, () => this.slotFreed(), deps.onError);
    this.cancels = new CancelWatch(
      deps.database,
      deps.processId,
      () => this.inFlight.size + this.buffer.size > 0,
      (jobIds) => this.cancel(jobIds),
      deps.logger,
    );
  }

  get processId(): number {
    return this.deps.processId;
  }

  /** Ids of the jobs this worker is running now. */
  get runningJobIds(): number[] {
    return this.inFlight.ids();
  }

  /** Start polling, and wake early whenever jobs may have become ready (see JobsReadySignal). */
  override start(): void {
    super.start();
    this.cancels.start();
    this.stopHearingOfJobs ??= this.deps.database.jobsReady.subscribe(
      () => {
        if (this.wantsMore()) this.wake();
      },
      (error) =>
        this.deps.logger.warn("lost the connection that hears of new jobs; polling until it is back", {
          processId: this.deps.processId,
          error,
        }),
    );
  }

  protected async poll(): Promise<number> {
    if (this.strayClaims.due) await this.releaseStrayClaims();
    return this.strayClaims.cap(await this.claimAndStart());
  }

  /** Start buffered jobs, claim more when there is room, start what fits; returns the sleep before the next poll. */
  private async claimAndStart(): Promise<number> {
    if (this.budgets.refreshDue()) await this.budgets.refresh();
    if (this.budgets.mayHaveWork(this.scope)) {
      // Jobs within a budget first, for the slots free now (before buffered jobs take them): they
      // start the moment they are claimed, never buffered, so a claim ahead cannot overrun a window.
      const free = this.freeSlots();
      this.budgetClaiming = true;
      const budgeted = await this.forSlots(free, () => this.budgets.claim(this.scope, free, this.deps.processId))
        .catch((error: unknown) => {
          if (error instanceof ProcessRowGoneError) throw error;
          // The ordinary claim goes on; the budgets are tried again at the next poll.
          this.deps.onError(error);
          return [];
        })
        .finally(() => {
          this.budgetClaiming = false;
        });
      if (budgeted.length > 0 && !(await this.startClaimed(budgeted))) return 0;
    }
    this.startBuffered();
    if (!this.wantsMore()) {
      // Sleeping until woken: a freed slot must wake it (slotFreed) even if the last claim did not
      // fill its capacity. Without a signal of new jobs from other processes (on SQLite and
      // MySQL there is none), nothing else would, and the worker would claim nothing for 24 days.
      this.lastClaimFilledCapacity = true;
      return this.budgetSleep(UNTIL_WOKEN);
    }
    const wanted = this.claimRoom();
    // The jobs for the slots free now are marked started by the claim itself: they start the
    // moment it returns, and their marks cost no write of their own.
    const startNow = Math.min(wanted, this.freeSlots());
    const jobs = await this.forSlots(startNow, () =>
      claimJobs(this.deps.database, this.selector, wanted, this.deps.processId, {
        startNow,
        onLaterError: (laterError) => {
          // An earlier queue's claim worked, a later one's failed: it may have committed all the same.
          this.strayClaims.claimFailed();
          this.deps.onError(laterError);
        },
        adjustTargets:
          this.budgets.limitedQueues.size === 0 ? undefined : (targets) => this.budgets.withoutLimitedQueues(targets),
      }),
    );
    if (!(await this.startClaimed(jobs))) return 0;
    this.lastClaimFilledCapacity = jobs.length === wanted;
    return this.budgetSleep(this.lastClaimFilledCapacity ? UNTIL_WOKEN : this.settings.pollingInterval);
  }

  /** The poll's sleep, cut short to when a budget with waiting jobs opens. */
  private budgetSleep(sleep: number): number {
    const wait = this.budgets.waitMs();
    if (wait === null) return sleep;
    // A budget with room but few slots free: let more free (a freed slot wakes the poll once
    // enough have, see slotFreed) or a polling interval pass, so one budget claim starts many
    // jobs instead of one per freed slot, each with a transaction of its own.
    if (this.freeSlots() < this.budgetBatch()) return Math.min(sleep, Math.max(wait, this.settings.pollingInterval));
    return Math.min(sleep, wait);
  }

  /** Free slots worth a budget claim at once: a quarter of the concurrency. */
  private budgetBatch(): number {
    return Math.max(1, Math.ceil(this.settings.concurrency / 4));
  }

  /** Slots free for a claim's jobs now (none held for a claim under way). */
  private freeSlots(): number {
    return Math.max(0, this.settings.concurrency - this.inFlight.handlersRunning - this.reserved);
  }

  /**
   * Run `claim` holding `slots` slots for the jobs it marks started: buffered jobs may not take
   * them meanwhile (a handler ending during the claim starts one), so each of those jobs finds
   * its slot when the claim returns.
   */
  private async forSlots<T>(slots: number, claim: () => Promise<T>): Promise<T> {
    this.reserved = slots;
    try {
      return await claim();
    } finally {
      this.reserved = 0;
    }
  }

  /**
   * Start the claimed jobs the claim marked started (it took them for free slots, held for them
   * while it ran: see {@link forSlots}), buffer the rest, then start buffered jobs in any slot
   * freed meanwhile; false when the worker stopped while claiming (the jobs went straight back in
   * line, marked or not: releasing a claim counts no attempt).
   */
  private async startClaimed(jobs: ClaimedJob[]): Promise<boolean> {
    if (!this.isRunning) {
      // Stopped while claiming: hand the jobs straight back instead of starting them.
      await releaseClaims(
        this.deps.database,
        this.deps.policies,
        this.deps.processId,
        jobs.map((job) => Number(job.id)),
      );
      return false;
    }
    this.runner.claimed(jobs);
    const waiting: ClaimedJob[] = [];
    for (const job of jobs) {
      if (markedAtClaim(job)) this.inFlight.start(job);
      else waiting.push(job);
    }
    this.buffer.add(waiting);
    this.startBuffered();
    return true;
  }

  /**
   * Whether a claim now is worth its transaction: a slot is free with nothing buffered for it, or
   * the buffer has fallen to half its bound (so claims come in batches, not one per ended job).
   */
  private wantsMore(): boolean {
    const free = this.settings.concurrency - this.inFlight.handlersRunning;
    return (free > this.buffer.size || this.buffer.isLow) && this.claimRoom() > 0;
  }

  /**
   * How many more jobs this worker may claim. Jobs not yet started or still running (buffered
   * plus running) never exceed its slots plus the prefetch bound; jobs whose handler has ended
   * and whose outcome waits to be written are bounded apart, by as many again. So the next batch
   * is claimed while the last one's outcomes are being written: counting those against the same
   * bound made the worker wait for each finish write before it claimed, one step after the other.
   */
  private claimRoom(): number {
    const bound = this.settings.concurrency + this.buffer.bound;
    const unended = this.inFlight.handlersRunning + this.buffer.size;
    return Math.min(bound - unended, 2 * bound - this.inFlight.size - this.buffer.size);
  }

  /**
   * A buffered job may start: fewer than `concurrency` run (jobs waiting for their write do not
   * count), besides the slots held for a claim under way.
   */
  private hasFreeSlot(): boolean {
    return this.inFlight.handlersRunning + this.reserved < this.settings.concurrency;
  }

  /** Start buffered jobs in the free slots. */
  private startBuffered(): void {
    while (this.hasFreeSlot()) {
      const job = this.buffer.take();
      if (job === undefined) return;
      this.inFlight.start(job);
    }
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
      // The buffered jobs' claims went with the row (failed as orphans): another worker owns
      // them now, so they must not start here.
      this.buffer.drain();
      return UNTIL_WOKEN;
    }
    this.strayClaims.claimFailed();
    if (!repeated) this.deps.onError(error);
    return this.settings.pollingInterval;
  }

  /**
   * Stop claiming, fire every running job's AbortSignal, put the buffered jobs that never started
   * back in their queues (no attempt is counted), wait up to `timeout` ms for the running ones to end,
   * then put the jobs whose handler is still running back in their queue (no attempt is
   * counted). A job whose handler has ended is never put back: its outcome is being written, and
   * the stop waits for that write (up to {@link WRITE_GRACE_MS} more if the database keeps
   * failing, then one last try). A write that fails even then leaves its job claimed (see
   * {@link unrecordedJobIds}). Returns the ids of the jobs released.
   */
  async shutdown(timeout: number): Promise<number[]> {
    await this.stopHearingOfJobs?.();
    this.stopHearingOfJobs = undefined;
    await this.stopPolling();
    await this.cancels.stopPolling();
    this.inFlight.abortAll(() => new ShutdownSignal());
    // While the running jobs wind down, the ones that never started go back for other workers.
    const unstarted = await this.releaseBuffered();
    // The wait's timer ends with the jobs: left running, it would keep the process alive for the
    // whole timeout after the supervisor stopped (a script that stops and closes would linger).
    const waited = new AbortController();
    const result = await Promise.race([
      this.inFlight.allDone().then(() => "done" as const),
      this.waitOrHurry(timeout, waited.signal),
    ]);
    waited.abort();
    if (result === "done") return unstarted;
    const stuck = this.inFlight.unsettled().map((job) => Number(job.id));
    const released =
      stuck.length === 0 ? [] : await releaseClaims(this.deps.database, this.deps.policies, this.deps.processId, stuck);
    this.runner.released(this.inFlight.all(), released, true);
    if (released.length > 0) {
      this.deps.logger.warn("shutdown timeout passed; jobs still running were put back in their queues", {
        jobIds: released,
        timeoutMs: timeout,
      });
    }
    await this.inFlight.awaitWrites(WRITE_GRACE_MS, this.deps.logger, this.deps.processId);
    await this.runner.flushProgress();
    this.runner.stopRetrying();
    return [...unstarted, ...released];
  }

  /**
   * Put the claimed jobs that never started back in line, attempts unchanged. If the database
   * fails, they stay claimed: crash recovery fails them with this process (see docs/reliability).
   */
  private async releaseBuffered(): Promise<number[]> {
    const jobs = this.buffer.drain();
    const jobIds = jobs.map((job) => Number(job.id));
    if (jobIds.length === 0) return [];
    try {
      const released = await releaseClaims(this.deps.database, this.deps.policies, this.deps.processId, jobIds);
      this.runner.released(jobs, released, false);
      return released;
    } catch (error) {
      this.deps.logger.error(
        "could not put claimed jobs that never started back in line; they stay claimed until this process's claims are recovered",
        { processId: this.deps.processId, jobIds, error },
      );
      return [];
    }
  }

  /**
   * Jobs that ran but whose outcome a stop could not record: the process's deregistration must not
   * put their claims back in line (that would run them again with no attempt counted).
   */
  unrecordedJobIds(): readonly number[] {
    return this.inFlight.unrecordedJobIds();
  }

  /** Cut a graceful stop's wait for running jobs short: release them now (settled ones still get written). */
  hurry(): void {
    this.hurried.abort();
  }

  private async waitOrHurry(timeout: number, done: AbortSignal): Promise<"timeout"> {
    await sleep(timeout, AbortSignal.any([this.hurried.signal, done]));
    return "timeout";
  }

  /**
   * Put back in line any claim this process holds for a job this worker neither runs nor holds in
   * its buffer: what a failed claim can leave behind, a claim whose COMMIT landed while the worker
   * saw only an error, or a claim statement it gave up on that the server finished later (see
   * {@link StrayClaimChecks} for when this runs). Safe because only this poller claims for this
   * process, and every job it knows of is in one of those two sets. A buffered job whose
   * cancellation is being written is in neither: releasing it ends it cancelled all the same
   * (releaseClaims does not put a job whose cancel was requested back in line), and the claim it
   * holds while that write's transaction runs is skipped as locked.
   */
  private async releaseStrayClaims(): Promise<void> {
    const stray = (await claimedJobIds(this.deps.database.db, this.deps.processId)).filter(
      (jobId) => !this.inFlight.has(jobId) && !this.buffer.has(jobId),
    );
    if (stray.length > 0) {
      const released = await releaseClaims(this.deps.database, this.deps.policies, this.deps.processId, stray);
      this.deps.logger.warn(
        "claims this worker did not know it held (a claim's answer was lost, or it committed after the worker gave up on it) were put back in line",
        { processId: this.deps.processId, jobIds: released },
      );
    }
    this.strayClaims.checked();
  }

  /** Cancelled jobs: fire a running one's AbortSignal; a buffered one never starts. */
  private cancel(jobIds: readonly number[]): void {
    for (const jobId of jobIds) {
      if (!this.inFlight.abort(jobId, new CancelledSignal(jobId))) {
        const buffered = this.buffer.remove(jobId);
        if (buffered !== undefined) void this.runner.cancelUnstarted(buffered);
      }
    }
  }

  /** A handler ended or an outcome was written: start buffered jobs, claim more when low. */
  private slotFreed(): void {
    if (this.budgets.dueNow() && !this.budgetClaiming) {
      // A budget has room now: let the poll offer it the slot before a buffered job takes it,
      // once enough slots are free for one claim (else the poll comes within its interval). A
      // budget claim under way holds the slots it asked for: a slot freed meanwhile is not for it.
      if (this.freeSlots() >= this.budgetBatch()) this.wake();
      return;
    }
    if (this.isRunning) this.startBuffered();
    if (this.lastClaimFilledCapacity && this.wantsMore()) this.wake();
  }
}
