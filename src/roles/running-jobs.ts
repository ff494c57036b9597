import { sleep } from "../backoff.js";
import type { Logger } from "../logger.js";
import type { ClaimedJob } from "../database/claimed-job.js";
import { JobAbort } from "./job-abort.js";
import type { JobRunner } from "./job-runner.js";

const SETTLED = Promise.resolve();

/**
 * A job started by this worker and not yet recorded: `settled` once its handler has ended (only
 * the outcome write is left), `putsBack` when that write puts the job back in line (its handler
 * stopped for the shutdown). `done` settles when the whole run, write included, is over.
 */
interface RunningJob {
  readonly job: ClaimedJob;
  readonly abort: JobAbort;
  done: Promise<void>;
  settled: boolean;
  putsBack: boolean;
}

/**
 * The jobs a worker has started and not yet recorded. A slot frees when a handler ends, not when
 * its outcome is written: finished jobs then wait for their write beside the next ones running, so
 * one finish batch can carry more jobs than there are slots. So two counts matter: handlers still
 * running ({@link handlersRunning}, against the concurrency) and jobs not yet recorded
 * ({@link size}, against the claim bound).
 */
export class RunningJobs {
  private readonly jobs = new Map<number, RunningJob>();
  private handlers = 0;
  /**
   * Jobs whose handler ended but whose outcome a stopping worker could not record, even on a last
   * try: their claims must stay (see {@link unrecordedJobIds}).
   */
  private readonly unrecorded = new Set<number>();

  /** {@link slotFreed} from a microtask: what it throws goes to `onError`, as nothing else would hear it. */
  private readonly slotFreedLater = (): void => {
    try {
      this.slotFreed();
    } catch (error) {
      this.onError(error);
    }
  };

  constructor(
    private readonly runner: JobRunner,
    /** A handler ended or an outcome was written: the worker may start or claim more. */
    private readonly slotFreed: () => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Handlers that have not ended. */
  get handlersRunning(): number {
    return this.handlers;
  }

  /** Jobs started and not yet recorded (handlers running plus outcomes waiting for their write). */
  get size(): number {
    return this.jobs.size;
  }

  has(jobId: number): boolean {
    return this.jobs.has(jobId);
  }

  ids(): number[] {
    return [...this.jobs.keys()];
  }

  /** Fire a running job's AbortSignal; false when this worker is not running that job. */
  abort(jobId: number, reason: unknown): boolean {
    const running = this.jobs.get(jobId);
    running?.abort.abort(reason);
    return running !== undefined;
  }

  /** Fire every running job's AbortSignal. */
  abortAll(reason: () => unknown): void {
    for (const { abort } of this.jobs.values()) abort.abort(reason());
  }

  /** Run `job` through the runner; the slot is taken until its handler ends. */
  start(job: ClaimedJob): void {
    const jobId = Number(job.id);
    const entry: RunningJob = { job, abort: new JobAbort(), done: SETTLED, settled: false, putsBack: false };
    let counted = true;
    const handlerEnded = () => {
      if (!counted) return;
      counted = false;
      this.handlers--;
    };
    this.handlers++;
    entry.done = this.runner
      .run(job, entry.abort, (putsBack) => {
        entry.settled = true;
        entry.putsBack = putsBack;
        handlerEnded();
        // The slot is free while the outcome is written: start the next job (after this call
        // returns, so the runner's write is queued first and one turn's jobs share a batch). A
        // reaction on a settled promise rather than queueMicrotask, which wraps every callback in
        // an AsyncResource of its own: that was a measurable share of a busy worker's CPU
        // (bench/results/2026-12-07-worker-cpu).
        void SETTLED.then(this.slotFreedLater);
      })
      .then(
        () => undefined,
        (error: unknown) => {
          // The outcome write gave up (a stop can wait no longer). The claim of a job that ran
          // must stay; one whose handler stopped for the shutdown may go back in line as it meant to.
          if (entry.settled && !entry.putsBack) this.unrecorded.add(jobId);
          this.onError(error);
        },
      )
      .finally(() => {
        handlerEnded();
        this.jobs.delete(jobId);
        this.slotFreed();
      });
    this.jobs.set(jobId, entry);
  }

  /** Resolves once every job started so far has been recorded (or its write gave up). */
  async allDone(): Promise<void> {
    await Promise.allSettled([...this.jobs.values()].map((entry) => entry.done));
  }

  /** The jobs whose handler has not ended. */
  unsettled(): ClaimedJob[] {
    return [...this.jobs.values()].filter((entry) => !entry.settled).map((entry) => entry.job);
  }

  /** Every job started and not yet recorded. */
  all(): ClaimedJob[] {
    return [...this.jobs.values()].map((entry) => entry.job);
  }

  /**
   * Wait for the outcome writes of jobs whose handler has ended, up to `graceMs` while they keep
   * failing; then each write still failing gets one last, immediate try, and is waited for, so the
   * deregistration that follows knows which claims it must leave alone ({@link unrecordedJobIds}).
   */
  async awaitWrites(graceMs: number, logger: Logger, processId: number): Promise<void> {
    const writing = [...this.jobs.values()].filter((entry) => entry.settled).map((entry) => entry.done);
    if (writing.length === 0) return;
    const giveUp = new AbortController();
    const written = await Promise.race([
      Promise.allSettled(writing).then(() => true),
      sleep(graceMs, giveUp.signal).then(() => false),
    ]);
    giveUp.abort();
    if (written) return;
    this.runner.stopRetrying();
    await Promise.allSettled(writing);
    if (this.unrecorded.size > 0)
      logger.error(
        "gave up recording the outcome of jobs that ran; their claims are kept (not put back in line), " +
          "and are recovered as a crash's would be (ProcessMissingError) once this process is gone",
        { processId, jobIds: [...this.unrecorded] },
      );
  }

  /**
   * Jobs that ran but whose outcome a stop could not record: the process's deregistration must not
   * put their claims back in line (that would run them again with no attempt counted).
   */
  unrecordedJobIds(): readonly number[] {
    return [...this.unrecorded];
  }
}
