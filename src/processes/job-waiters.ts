import type { Database } from "../database/connection.js";
import {
  ClosedError,
  JobCancelledError,
  JobDeletedWhileAwaitedError,
  JobFailedError,
  JobNotFoundError,
  WaitTimeoutError,
} from "../errors.js";
import { readJobOutcomes, type JobOutcome } from "../models/job-outcomes.js";

/** What `waitFor` resolves with: the job, finished, and what its handler returned. */
export interface EndedJob {
  readonly id: number;
  readonly state: "finished";
  /** What the handler returned, decoded; undefined when it returned nothing. */
  readonly result: unknown;
  /** Always null for a finished job (a failed one rejects the wait with JobFailedError). */
  readonly error: null;
}

/** How one wait may end early. */
export interface WaitLimits {
  /** Milliseconds; undefined waits for as long as the job takes. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

interface Waiter {
  readonly jobId: number;
  /** Whether a check has found the job's row: a row gone after that was deleted while awaited. */
  seen: boolean;
  settle(outcome: { value: EndedJob } | { error: unknown }): void;
}

/**
 * Every `waitFor` of one FirmQueue, answered together: a single query reads the state of all the
 * awaited jobs, once per polling interval while anyone waits, so a thousand waiters cost what one
 * does. Where the database announces ended jobs (PostgreSQL: migration 011's triggers, for jobs
 * flagged awaited), a notification makes the next query come at once, for the announced jobs only;
 * polling stays as the safety net for a lost notification. Works in a process that runs no worker.
 */
export class JobWaiters {
  private readonly waiters = new Map<number, Set<Waiter>>();
  /** Ids to check at the next query; `all` when it should read every awaited job. */
  private due = new Set<number>();
  private dueAll = false;
  private checking: Promise<void> | undefined;
  private scheduled: NodeJS.Immediate | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private toMark: number[] = [];
  private marking: Promise<void> | undefined;
  private listening: Promise<(() => Promise<void>) | undefined> | undefined;
  private closed = false;

  constructor(
    private readonly database: () => Promise<Database>,
    private readonly pollIntervalMs: number,
    /** Hears of a failed query or a lost notification connection; waiting goes on. */
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Wait until job `jobId` ends: resolves when it finished, rejects when it failed for good, was cancelled or does not exist. */
  async wait(jobId: number, limits: WaitLimits = {}): Promise<EndedJob> {
    limits.signal?.throwIfAborted();
    if (this.closed) throw new ClosedError("waitFor");
    const database = await this.database();
    // LISTEN before flagging the job: an end committed after the flag is then always heard.
    if (database.listenForEndedJobs) await this.listen(database);
    // The signal may have aborted, or the instance closed, while the LISTEN connection opened.
    limits.signal?.throwIfAborted();
    if (this.closed) throw new ClosedError("waitFor");
    return new Promise<EndedJob>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const abort = () => waiter.settle({ error: limits.signal!.reason });
      const waiter: Waiter = {
        jobId,
        seen: false,
        settle: (outcome) => {
          const set = this.waiters.get(jobId);
          if (!set?.delete(waiter)) return;
          if (set.size === 0) this.waiters.delete(jobId);
          clearTimeout(timer);
          limits.signal?.removeEventListener("abort", abort);
          if (this.waiters.size === 0) this.stopPolling();
          if ("value" in outcome) resolve(outcome.value);
          else reject(outcome.error);
        },
      };
      const wasIdle = this.waiters.size === 0;
      let set = this.waiters.get(jobId);
      if (!set) this.waiters.set(jobId, (set = new Set()));
      set.add(waiter);
      if (limits.timeoutMs !== undefined) {
        const timeout = limits.timeoutMs;
        timer = setTimeout(() => waiter.settle({ error: new WaitTimeoutError(jobId, timeout) }), timeout);
      }
      limits.signal?.addEventListener("abort", abort, { once: true });
      if (database.dialect.markAwaited) this.markAwaited(database, jobId);
      else if (wasIdle) this.checkSoon();
      this.startPolling();
    });
  }

  /** How many waits are pending. */
  get size(): number {
    let count = 0;
    for (const set of this.waiters.values()) count += set.size;
    return count;
  }

  /** Reject every pending wait with ClosedError and stop polling and listening. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const set of [...this.waiters.values()])
      for (const waiter of [...set]) waiter.settle({ error: new ClosedError("waitFor") });
    this.stopPolling();
    clearImmediate(this.scheduled);
    await this.marking;
    const stop = await this.listening;
    await stop?.();
    await this.checking;
  }

  private listen(database: Database): Promise<unknown> {
    this.listening ??= database.listenForEndedJobs!(
      (jobId) => {
        if (jobId === undefined) this.checkSoon();
        else if (this.waiters.has(jobId)) this.checkSoon([jobId]);
      },
      (error) => this.onError(error),
    ).catch((error: unknown) => {
      this.onError(error);
      return undefined;
    });
    return this.listening;
  }

  /** Flag the jobs awaited in this turn of the event loop in one statement, then check them. */
  private markAwaited(database: Database, jobId: number): void {
    this.toMark.push(jobId);
    if (this.toMark.length > 1) return;
    this.marking = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const ids = this.toMark;
      this.toMark = [];
      try {
        await database.dialect.markAwaited!(database.db, ids);
      } catch (error) {
        // Without the flag no notification comes: the polls still find the job's end.
        this.onError(error);
      }
      this.checkSoon(ids);
    });
  }

  private startPolling(): void {
    if (this.pollTimer !== undefined || this.closed) return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      this.checkSoon();
      this.startPolling();
    }, this.pollIntervalMs);
  }

  private stopPolling(): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
  }

  /** Query soon for `ids` (every awaited job when absent); one query at a time, the rest folded into the next. */
  private checkSoon(ids?: readonly number[]): void {
    if (ids === undefined) this.dueAll = true;
    else for (const id of ids) this.due.add(id);
    if (this.checking !== undefined || this.scheduled !== undefined || this.closed) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.checking = this.check().finally(() => {
        this.checking = undefined;
        if (this.dueAll || this.due.size > 0) this.checkSoon([]);
      });
    });
  }

  private async check(): Promise<void> {
    const ids = this.dueAll ? [...this.waiters.keys()] : [...this.due].filter((id) => this.waiters.has(id));
    this.dueAll = false;
    this.due = new Set();
    if (ids.length === 0) return;
    let outcomes: Map<number, JobOutcome>;
    try {
      outcomes = await readJobOutcomes((await this.database()).db, ids);
    } catch (error) {
      this.onError(error);
      return;
    }
    for (const id of ids) {
      const outcome = outcomes.get(id);
      for (const waiter of [...(this.waiters.get(id) ?? [])]) settleWith(waiter, outcome);
    }
  }
}

function settleWith(waiter: Waiter, outcome: JobOutcome | undefined): void {
  const id = waiter.jobId;
  if (outcome === undefined) {
    waiter.settle({ error: waiter.seen ? new JobDeletedWhileAwaitedError(id) : new JobNotFoundError(id) });
    return;
  }
  waiter.seen = true;
  if (outcome.state === "finished")
    waiter.settle({ value: { id, state: "finished", result: outcome.result, error: null } });
  else if (outcome.state === "failed") waiter.settle({ error: new JobFailedError(id, outcome.error) });
  else if (outcome.state === "cancelled") waiter.settle({ error: new JobCancelledError(id) });
}
