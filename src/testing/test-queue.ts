import { AssertionError } from "node:assert";
import type { Database } from "../database/connection.js";
import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { INSTANCE_PARTS } from "../facade/internal-access.js";
import { drainQueues } from "../facade/drain.js";
import { FirmQueue } from "../firm-queue.js";
import { silentLogger, type Logger } from "../logger.js";
import { listWaitingJobs, type WaitingJob } from "../models/waiting-jobs.js";
import { rejectUnknownKeys } from "../option-checks.js";
import { resolveRecurringTasks, type RecurringTasksOptions } from "../definitions/recurring-task.js";
import { Scheduler } from "../roles/scheduler.js";
import { describeJobs, matches, show } from "./matching.js";
import type { JobName, NamesJobs } from "../definitions/job-names.js";

/** Which enqueued jobs `enqueued`, `assertEnqueued` and `refuteEnqueued` look at. Every key is optional. */
export interface AnyEnqueuedFilter {
  /** The job's name. */
  readonly name?: string;
  /** Arguments the job's must hold: equal, or for objects the keys given (see docs/testing-apps.md). */
  readonly args?: unknown;
  /** The job's queue. */
  readonly queue?: string;
}

/**
 * A filter of `enqueued`, `assertEnqueued` and `refuteEnqueued`. For a FirmQueue with a `Jobs`
 * map, `name` is one of its names and `args` a pattern of that job's arguments (any of their
 * keys, each a pattern of its value); without one, as {@link AnyEnqueuedFilter}.
 */
// biome-ignore lint/suspicious/noExplicitAny: as FirmQueue's default: no map
export type EnqueuedFilter<Jobs extends object = any> =
  NamesJobs<Jobs> extends true
    ?
        | {
            readonly [Name in JobName<Jobs>]: {
              readonly name: Name;
              readonly args?: ArgumentsPattern<Jobs[Name]>;
              readonly queue?: string;
            };
          }[JobName<Jobs>]
        | { readonly name?: undefined; readonly queue?: string }
    : AnyEnqueuedFilter;

/** What `args` of a filter may give of arguments of type `T`: equal values, any keys of objects, arrays item by item. */
export type ArgumentsPattern<T> = T extends string | number | boolean | bigint | Date | null | undefined
  ? T
  : T extends readonly (infer Item)[]
    ? readonly ArgumentsPattern<Item>[]
    : T extends object
      ? { readonly [Key in keyof T]?: ArgumentsPattern<T[Key]> }
      : T;

/** Options of {@link createTestQueue}. */
export interface TestQueueOptions {
  /** Recurring tasks, as `start({ recurring })` takes them: `runAll` enqueues their due ticks. */
  readonly recurring?: RecurringTasksOptions;
}

/** Options of {@link TestQueue.runAll}. */
export interface RunAllOptions {
  /** Most jobs to run before giving up with an error (a job that enqueues itself forever). Default 10,000. */
  readonly limit?: number;
}

const FILTER_KEYS = new Set(["name", "args", "queue"]);
const OPTION_KEYS = new Set(["recurring"]);
const RUN_KEYS = new Set(["limit"]);

/**
 * A FirmQueue under test, with no worker running: see what the code under test enqueued, run it
 * when the test says so, and move the queue's clock. Made by {@link createTestQueue}. `Jobs`: the
 * FirmQueue's map of job names to argument types, which types the filters.
 */
// biome-ignore lint/suspicious/noExplicitAny: as FirmQueue's default: no map
export class TestQueue<Jobs extends object = any> {
  private constructor(
    /** The FirmQueue the test enqueues on (the application's, or a fresh in-memory one). */
    readonly firm: FirmQueue<Jobs>,
    private readonly database: Database,
    private readonly scheduler: Scheduler,
    private readonly ownsFirm: boolean,
  ) {}

  /** @internal Use {@link createTestQueue}. */
  static async create<Jobs extends object>(
    firm: FirmQueue<Jobs> | undefined,
    options: TestQueueOptions = {},
  ): Promise<TestQueue<Jobs>> {
    rejectUnknownKeys(options, OPTION_KEYS, "createTestQueue option");
    if (firm !== undefined && !FirmQueue.isFirmQueue(firm))
      throw new ConfigurationError("createTestQueue() takes a FirmQueue (or nothing, for one on in-memory SQLite)");
    const owns = firm === undefined;
    const queue = firm ?? new FirmQueue({ databaseUrl: "sqlite::memory:", logger: silentLogger });
    await queue.migrate();
    const database = await queue.database();
    const parts = queue[INSTANCE_PARTS];
    const staticTasks =
      options.recurring === undefined ? null : resolveRecurringTasks(options.recurring, queue.jobNames);
    const scheduler = new Scheduler(
      { dynamicTasks: true, pollingInterval: 0 },
      {
        database,
        registry: parts.registry,
        policies: parts.policies,
        staticTasks,
        // A jump of the clock looks like a process that slept: the scheduler's warning about it
        // is expected here, so only errors are passed on.
        logger: errorsOnly(parts.logger),
        onError: (error) => parts.logger.error("recurring tick failed", { error }),
        now: () => database.clock.now().getTime(),
      },
    );
    await scheduler.prepare();
    return new TestQueue(queue, database, scheduler, owns);
  }

  /** The jobs enqueued and not yet run (ready, scheduled or blocked) that match `filter`, in the order they were enqueued. */
  async enqueued(typedFilter: EnqueuedFilter<Jobs> = {}): Promise<WaitingJob[]> {
    // Every form of the typed filter is one of these; the checks and the query take it so.
    const filter: AnyEnqueuedFilter = typedFilter;
    checkFilter(filter, "enqueued");
    const jobs = await listWaitingJobs(this.database.db, {
      ...(filter.name === undefined ? {} : { name: filter.name }),
      ...(filter.queue === undefined ? {} : { queue: filter.queue }),
    });
    return filter.args === undefined ? jobs : jobs.filter((job) => matches(job.arguments, filter.args));
  }

  /**
   * Fail (an AssertionError) unless a job matching `filter` is enqueued; with `count`, unless
   * exactly that many are. The message lists what is enqueued instead. Returns the matching jobs.
   */
  async assertEnqueued(
    filter: EnqueuedFilter<Jobs> = {},
    options: { readonly count?: number } = {},
  ): Promise<WaitingJob[]> {
    const found = await this.enqueued(filter);
    const wanted = options.count;
    if (wanted === undefined ? found.length > 0 : found.length === wanted) return found;
    const all = await listWaitingJobs(this.database.db);
    const expected = wanted === undefined ? "a job" : `${wanted} job${wanted === 1 ? "" : "s"}`;
    throw new AssertionError({
      message: `Expected ${expected} matching ${show(filter)} to be enqueued, found ${found.length}. Enqueued:\n${describeJobs(all)}`,
      actual: all.map(summary),
      expected: filter,
      operator: "assertEnqueued",
    });
  }

  /** Fail (an AssertionError) if a job matching `filter` is enqueued; the message lists the ones found. */
  async refuteEnqueued(filter: EnqueuedFilter<Jobs> = {}): Promise<void> {
    const found = await this.enqueued(filter);
    if (found.length === 0) return;
    throw new AssertionError({
      message: `Expected no job matching ${show(filter)} to be enqueued, found ${found.length}:\n${describeJobs(found)}`,
      actual: found.map(summary),
      expected: [],
      operator: "refuteEnqueued",
    });
  }

  /**
   * Run every job that is due now on the queue's clock, in this process, until none is left:
   * scheduled jobs whose time has come are dispatched, recurring tasks' due ticks enqueued, and
   * jobs those jobs enqueue run too. A failed attempt whose retry is later stays scheduled (move
   * the clock with {@link advance}). Returns how many jobs ran.
   */
  async runAll(options: RunAllOptions = {}): Promise<number> {
    rejectUnknownKeys(options, RUN_KEYS, "runAll option");
    const limit = options.limit ?? 10_000;
    let ran = 0;
    for (;;) {
      await this.scheduler.step(this.database.clock.now().getTime());
      const dispatched = await this.firm.dispatch();
      const parts = this.firm[INSTANCE_PARTS];
      const drained = await drainQueues(this.database, parts.registry, parts.policies, {
        queues: "*",
        concurrency: 1,
        heartbeatInterval: 60_000,
        preserveFinishedJobs: parts.preserveFinishedJobs,
        logger: parts.logger,
        limit: limit + 1 - ran,
        // Due now on the queue's clock: a full budget's jobs wait for advance(), not for real time.
        waitForBudgets: false,
      });
      ran += drained;
      if (drained === 0 && dispatched === 0) return ran;
      if (ran > limit)
        throw new ConfigurationError(
          `runAll() ran more than ${limit} jobs and more keep coming (a job enqueuing itself?); raise its limit option if that is meant`,
        );
    }
  }

  /**
   * Move the queue's clock forward by `duration` ("1h", or milliseconds), for good: scheduled
   * jobs, retries and recurring ticks that fall within it become due. Nothing runs until
   * {@link runAll}.
   */
  advance(duration: Duration): void {
    const ms = toMilliseconds(duration, "advance()");
    if (!(ms > 0)) throw new ConfigurationError(`advance() needs a duration greater than zero, got ${show(duration)}`);
    this.database.clock.advance(ms);
  }

  /** The queue's clock now: the host's time plus what {@link advance} added. */
  now(): Date {
    return this.database.clock.now();
  }

  /** Close the FirmQueue if this test queue made it (an application's own is left to the application). */
  async close(): Promise<void> {
    if (this.ownsFirm) await this.firm.close();
  }
}

/**
 * A {@link TestQueue} on `firm` (migrated first), or on a new FirmQueue on an in-memory SQLite
 * database when none is given: define jobs on `testQueue.firm` then.
 */
// biome-ignore lint/suspicious/noExplicitAny: as FirmQueue's default: no map
export function createTestQueue<Jobs extends object = any>(
  firm?: FirmQueue<Jobs>,
  options?: TestQueueOptions,
): Promise<TestQueue<Jobs>> {
  return TestQueue.create(firm, options);
}

function checkFilter(filter: AnyEnqueuedFilter, where: string): void {
  rejectUnknownKeys(filter, FILTER_KEYS, `${where} filter`);
  for (const key of ["name", "queue"] as const) {
    if (filter[key] !== undefined && typeof filter[key] !== "string")
      throw new ConfigurationError(`${where} filter ${key} must be a string, got ${show(filter[key])}`);
  }
}

function summary(job: WaitingJob): object {
  return { id: job.id, name: job.name, queue: job.queue, state: job.state, args: job.arguments };
}

function errorsOnly(logger: Logger): Logger {
  return { ...silentLogger, error: (message, fields) => logger.error(message, fields) };
}
