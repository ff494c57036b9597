import { ConfigurationError } from "./errors.js";
import type { Logger } from "./logger.js";

/** What every job event says about its job. */
export interface JobEventBase {
  readonly jobId: number;
  /** The job's name, as given to `defineJob`. */
  readonly job: string;
  readonly queue: string;
}

/** An event about one attempt of a job: `attempt` is 1 for the first run, 2 for the first retry, … */
export interface JobAttemptEvent extends JobEventBase {
  readonly attempt: number;
  /** The worker process (its row in firm_queue_processes) running the attempt. */
  readonly processId: number;
}

/** An attempt that started or finished: `dueAt` is when the job was due (scheduled_at, else created_at). */
export interface JobRunEvent extends JobAttemptEvent {
  /** When the job became due; `startedAt - dueAt` is how long it waited in its queue. */
  readonly dueAt: Date;
  /** When the handler started, on the database's clock (the clock `dueAt` was written with). */
  readonly startedAt: Date;
}

/** An attempt that ended with an error. */
export interface JobFailureEvent extends JobAttemptEvent {
  readonly error: unknown;
  /** Attempts the job's retry policy allows in total. */
  readonly maxAttempts: number;
  /** How long the attempt ran; 0 when `recovered` (nobody saw it end). */
  readonly durationMs: number;
  /**
   * True when crash recovery failed the attempt: its process (`processId`) died or was pruned
   * holding the claim, and this event fires in the process that recovered it.
   */
  readonly recovered?: boolean;
}

/** How a batch ended, as `firm.getBatch` reports it (see docs/workflows.md). */
export type BatchEndState = "finished" | "failed" | "cancelled";

/**
 * A batch whose last job has ended (`batch.ended`). Not about one job: it carries the batch's id
 * and final counts instead of `jobId`, `job` and `queue`.
 */
export interface BatchEndedEvent {
  readonly batchId: number;
  /** `finished` (every job finished), `failed` (one failed for good), else `cancelled`. */
  readonly state: BatchEndState;
  readonly total: number;
  readonly finished: number;
  readonly failed: number;
  readonly cancelled: number;
  /** Ids of the callback jobs (`onSuccess`, `onFailure`, `onFinish`) its end enqueued, in that order. */
  readonly callbackJobIds: readonly number[];
}

/**
 * Every job event by name, with its payload. Events fire in the process that did the thing: the
 * enqueuing process for `job.enqueued`, the worker's process for the rest. docs/observability.md
 * lists them in one table.
 */
export interface JobEventMap {
  /** A job was written (one event per job, `enqueueAll` too). Inside a caller's transaction: once written, before its commit. */
  readonly "job.enqueued": JobEventBase & { readonly priority: number; readonly scheduledAt: Date };
  /** A worker claimed the job; it may wait in the worker's memory for a free slot before it starts. */
  readonly "job.claimed": JobAttemptEvent;
  /** The handler (and its middleware) is about to run. */
  readonly "job.started": JobRunEvent;
  /** The attempt succeeded and was recorded. */
  readonly "job.finished": JobRunEvent & { readonly durationMs: number };
  /** The attempt failed and the retry policy scheduled another, `delayMs` from now. */
  readonly "job.retrying": JobFailureEvent & { readonly delayMs: number; readonly retryAt: Date };
  /** The attempt failed and the job moved to failed jobs (attempts exhausted, or the error is not retried). */
  readonly "job.failed": JobFailureEvent & { readonly reason: string };
  /**
   * The attempt failed with an error the definition's `retry.abandonOn` matches: the job ends
   * without a retry and without a failed record (it is kept as finished).
   */
  readonly "job.abandoned": JobAttemptEvent & Pick<JobFailureEvent, "error" | "durationMs" | "recovered">;
  /**
   * The job was enqueued while its concurrency key had no free slot and its definition drops
   * jobs on conflict (`onConflict: "drop"`): nothing of it is kept, and enqueue's result is
   * `dropped`. `jobId` is the id it was written with in the enqueue's transaction.
   */
  readonly "job.dropped": JobEventBase;
  /**
   * The job was cancelled and has ended. Cancelled while waiting (`firm.jobs.cancel`, in the
   * cancelling process): the base fields only. Cancelled while claimed (in the worker that held
   * it): also `attempt` and `processId`, and `started` (false for a claimed job that never began).
   */
  readonly "job.cancelled": JobEventBase & {
    readonly started?: boolean;
    readonly attempt?: number;
    readonly processId?: number;
  };
  /** The job waits for a slot of its concurrency key (at enqueue, or when the dispatcher finds it due). */
  readonly "job.blocked": JobEventBase & { readonly concurrencyKey: string };
  /** A blocked job took a freed slot and is ready (in the process whose job freed the slot). */
  readonly "job.unblocked": JobEventBase & { readonly concurrencyKey: string };
  /**
   * The job waits for a rate-limit budget (docs/rate-limits.md): held at dispatch because it has
   * a limit of its own (at enqueue, when due, when a concurrency slot is handed to it), or put
   * back because its handler threw a `RateLimitedError` (then also `error`, `attempt` and
   * `processId`; no attempt is counted).
   */
  readonly "job.rateLimited": JobEventBase & {
    /** The budget it waits for; null for a RateLimitedError of a job with no budget (it waits alone). */
    readonly budget: string | null;
    /**
     * When it may start: the budget's reopening after a RateLimitedError; null when it waits for
     * room in its budget's window.
     */
    readonly mayStartAt: Date | null;
    readonly error?: unknown;
    readonly attempt?: number;
    readonly processId?: number;
  };
  /** The attempt ran past the definition's `timeout`: it fails (then `job.retrying` or `job.failed`). */
  readonly "job.timed_out": JobAttemptEvent & { readonly timeoutMs: number };
  /**
   * The worker is shutting down and put the job back in its queue, the attempt not counted:
   * `started` false for a claimed job that never started.
   */
  readonly "job.released": JobAttemptEvent & { readonly started: boolean };
  /**
   * The job was written waiting for its dependencies (`dependsOn`, or a flow's children): it is
   * `pending` until the last of them ends. `dependencies` is how many had not ended yet.
   */
  readonly "job.pending": JobEventBase & { readonly dependencies: number };
  /**
   * A pending job's last dependency ended (finished; or failed or was cancelled, for a job with
   * `onDependencyFailure: "run"`): it leaves `pending` and is dispatched like a new job.
   */
  readonly "job.dependenciesMet": JobEventBase;
  /**
   * The job was cancelled because one of its dependencies failed for good or was cancelled (its
   * `onDependencyFailure` is `"cancel"`), at enqueue when that dependency had already ended so, or
   * in cascade: `dependencyId` is that dependency, `dependencyState` how it ended. A job cancelled
   * this way is not also told as `job.cancelled`.
   */
  readonly "job.dependencyCancelled": JobEventBase & {
    readonly dependencyId: number;
    readonly dependencyState: "failed" | "cancelled";
  };
  /** A batch's last job ended: the batch has its final state, and its callbacks are enqueued. */
  readonly "batch.ended": BatchEndedEvent;
}

/** The name of a job event. */
export type JobEventName = keyof JobEventMap;

/** A function called with one event's payload; what it returns (a promise too) is not awaited. */
export type JobEventListener<Name extends JobEventName> = (event: JobEventMap[Name]) => unknown;

/** Every event name, in the order of a job's life. */
export const JOB_EVENT_NAMES: readonly JobEventName[] = Object.freeze([
  "job.enqueued",
  "job.claimed",
  "job.started",
  "job.finished",
  "job.retrying",
  "job.failed",
  "job.abandoned",
  "job.dropped",
  "job.blocked",
  "job.unblocked",
  "job.rateLimited",
  "job.timed_out",
  "job.released",
  "job.cancelled",
  "job.pending",
  "job.dependenciesMet",
  "job.dependencyCancelled",
  "batch.ended",
]);

const NONE: readonly never[] = Object.freeze([]);

/**
 * The job events of one FirmQueue (`firm.events`). Listeners run synchronously where the event
 * happens, and nothing waits for them: a listener that throws, or returns a promise that
 * rejects, is logged and reported to the `onError` hooks, and the job goes on. Code that emits
 * asks {@link has} first, so an event nobody listens to costs one lookup.
 */
export class JobEvents {
  /** Replaced, never mutated, on each change: emit iterates a snapshot without copying it. */
  private listeners: { [Name in JobEventName]?: readonly JobEventListener<Name>[] } = {};

  constructor(
    /** Told of a listener's error (after it is logged): the instance's `onError` hooks. */
    private readonly report: (error: unknown, name: JobEventName) => void,
  ) {}

  /** Call `listener` on each `name` event from now on. Returns the function that stops it. */
  on<Name extends JobEventName>(name: Name, listener: JobEventListener<Name>): () => void {
    checkName(name);
    if (typeof listener !== "function")
      throw new ConfigurationError(`firm.events.on("${name}") needs a listener function`);
    this.listeners = { ...this.listeners, [name]: [...(this.listeners[name] ?? NONE), listener] };
    return () => this.off(name, listener);
  }

  /** Stop calling `listener` on `name` events (no-op when it was not listening). */
  off<Name extends JobEventName>(name: Name, listener: JobEventListener<Name>): void {
    const current = this.listeners[name];
    const index = current?.indexOf(listener) ?? -1;
    if (index < 0) return;
    this.listeners = { ...this.listeners, [name]: current!.filter((_, i) => i !== index) };
  }

  /** How many listeners `name` has. */
  listenerCount(name: JobEventName): number {
    return this.listeners[name]?.length ?? 0;
  }

  /** Whether anyone listens to `name`: check it before building an event's payload. */
  has(name: JobEventName): boolean {
    return this.listeners[name] !== undefined && this.listeners[name].length > 0;
  }

  /** Call the listeners of `name` with `event`; never throws, never waits. */
  emit<Name extends JobEventName>(name: Name, event: JobEventMap[Name]): void {
    const listeners = this.listeners[name] as readonly JobEventListener<Name>[] | undefined;
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        const result = listener(event);
        if (isThenable(result)) result.then(undefined, (error: unknown) => this.reportError(error, name));
      } catch (error) {
        this.reportError(error, name);
      }
    }
  }

  /** Report an error met while telling `name` listeners (a listener's, or reading the event's data). */
  reportError(error: unknown, name: JobEventName): void {
    try {
      this.report(error, name);
    } catch {
      // The reporter logs; if even that throws there is nowhere left to say it.
    }
  }
}

/** Events whose listener errors go to `logger` only (no `onError` hooks): for code without an instance. */
export function loggedJobEvents(logger: Logger): JobEvents {
  return new JobEvents((error, name) => logger.error(`${name} listener failed`, { error }));
}

function checkName(name: string): void {
  if (!(JOB_EVENT_NAMES as readonly string[]).includes(name))
    throw new ConfigurationError(`Unknown job event "${name}" (known: ${JOB_EVENT_NAMES.join(", ")})`);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
