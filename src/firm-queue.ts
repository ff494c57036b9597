import { positiveInteger, resolveOptions, resolveStartOptions, type FirmQueueOptions, type ResolvedOptions, type StartOptions } from "./configuration.js";
import { openDatabase, type Database } from "./database/connection.js";
import { migrate } from "./database/migrator.js";
import { dispatchAllDue } from "./dispatcher.js";
import { drainQueues, type DrainOptions } from "./drain.js";
import { enqueueJobs } from "./enqueue.js";
import { ClosedError, ConfigurationError } from "./errors.js";
import { checkJobName, resolveJobOptions, type EnqueueOptions, type JobHandler, type JobOptions } from "./job-definition.js";
import { Job } from "./job.js";
import { JobRegistry } from "./job-registry.js";
import { findJobInfo, type JobInfo } from "./models/job-info.js";
import type { Db } from "./database/dialect.js";
import { QueueOperations } from "./queue-operations.js";
import { resolveRecurringTasks } from "./recurring/config.js";
import { RecurringOperations } from "./recurring/operations.js";
import { AsyncSupervisor, type Supervisor } from "./supervisor/async-supervisor.js";

const BRAND = Symbol.for("firm-queue.instance");

/**
 * The entry point: one instance per database. Define jobs on it, enqueue them, run them with
 * `start()` (or `drain()` in scripts and tests), and `close()` it when done. The database is
 * opened on first use.
 */
export class FirmQueue {
  /** The options this instance runs with, defaults filled in. */
  readonly options: ResolvedOptions;
  /** Pause, resume and list queues. */
  readonly queues: QueueOperations;
  /** Add, remove and list recurring tasks at run time. */
  readonly recurring: RecurringOperations;
  private readonly registry = new JobRegistry();
  private readonly supervisors = new Set<AsyncSupervisor>();
  private opening: Promise<Database> | undefined;
  private closed = false;

  constructor(options: FirmQueueOptions = {}) {
    this.options = resolveOptions(options);
    this.queues = new QueueOperations(() => this.database());
    this.recurring = new RecurringOperations(
      () => this.database(),
      () => this.jobNames,
      () => this.supervisors.forEach((supervisor) => supervisor.reloadRecurringTasks()),
    );
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Whether `value` is a FirmQueue, even one loaded from another copy of this package. */
  static isFirmQueue(value: unknown): value is FirmQueue {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /**
   * Define a job: `handler` runs with the job's arguments and a context (job id, attempt, an
   * AbortSignal that fires on shutdown). Returns the handle to enqueue it with.
   */
  defineJob<Args = unknown>(name: string, handler: JobHandler<Args>, options?: JobOptions): Job<Args> {
    checkJobName(name);
    if (typeof handler !== "function") throw new ConfigurationError(`defineJob("${name}") needs a handler function`);
    const resolved = resolveJobOptions(name, options);
    this.registry.add({ name, handler: handler as JobHandler<unknown>, options: resolved });
    return new Job<Args>(name, resolved, () => this.database());
  }

  /** Names of the jobs defined on this instance. */
  get jobNames(): string[] {
    return this.registry.names();
  }

  /**
   * Enqueue a job by name, for code that does not hold its definition (a web app enqueuing work a
   * separate worker service defines). Defaults come from the definition when there is one here.
   */
  async enqueue(name: string, args: unknown, options?: EnqueueOptions): Promise<number> {
    checkJobName(name);
    const defaults = this.registry.get(name)?.options ?? resolveJobOptions(name, {});
    const [id] = await enqueueJobs(await this.database(), [{ name, args, defaults, ...(options ? { options } : {}) }], options?.transaction as Db | undefined);
    return id!;
  }

  /** A job and its state, or null when there is no such job. */
  async getJob(id: number): Promise<JobInfo | null> {
    return findJobInfo((await this.database()).db, id);
  }

  /** Create or update firm-queue's tables. Returns the migrations applied (none when up to date). */
  async migrate(): Promise<string[]> {
    const database = await this.database();
    return migrate(database, (version) => this.options.logger.info("migration applied", { version }));
  }

  /** Run ready jobs in this process until none are left; returns how many ran. */
  async drain(options: DrainOptions = {}): Promise<number> {
    return drainQueues(await this.database(), this.registry, {
      queues: options.queues ?? "*",
      concurrency: positiveInteger(options.concurrency ?? 1, "drain option concurrency"),
      preserveFinishedJobs: this.options.preserveFinishedJobs,
      logger: this.options.logger,
    });
  }

  /** Move every due scheduled job to ready now; returns how many moved. */
  async dispatch(options: { batchSize?: number } = {}): Promise<number> {
    return dispatchAllDue(await this.database(), positiveInteger(options.batchSize ?? 500, "dispatch option batchSize"));
  }

  /**
   * Start workers and dispatchers, and a scheduler when `recurring` tasks or `scheduler` options
   * are given. Stop them with the returned supervisor's `stop()`. Recurring tasks are checked
   * before anything starts: a bad one throws a RecurringTaskError naming it.
   */
  async start(options?: StartOptions): Promise<Supervisor> {
    const settings = resolveStartOptions(options);
    const recurringTasks = options?.recurring === undefined ? null : resolveRecurringTasks(options.recurring, this.jobNames);
    const supervisor = await AsyncSupervisor.start(settings, {
      database: await this.database(),
      registry: this.registry,
      preserveFinishedJobs: this.options.preserveFinishedJobs,
      logger: this.options.logger,
      recurringTasks,
    });
    this.supervisors.add(supervisor);
    return {
      id: supervisor.id,
      stop: async () => {
        await supervisor.stop();
        this.supervisors.delete(supervisor);
      },
    };
  }

  /** Stop anything still running and close the database pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.supervisors].map((supervisor) => supervisor.stop()));
    if (this.opening) await (await this.opening.catch(() => undefined))?.close();
  }

  /** The open database, opening it on first use. */
  async database(): Promise<Database> {
    if (this.closed) throw new ClosedError("database");
    this.opening ??= openDatabase(this.options.databaseUrl, { poolSize: this.options.poolSize });
    try {
      return await this.opening;
    } catch (error) {
      // Let a later call try again (the server may come up); keep reporting this failure now.
      this.opening = undefined;
      throw error;
    }
  }
}
