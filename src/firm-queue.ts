import { resolveOptions, type FirmQueueOptions, type ResolvedOptions, type StartOptions } from "./facade/options.js";
import type { Database } from "./database/connection.js";
import { InstanceDatabase } from "./facade/instance-database.js";
import { startSupervisor } from "./facade/start-supervisor.js";
import { toTimerMilliseconds } from "./duration.js";
import { migrate } from "./database/migrator.js";
import { dispatchAllDue } from "./roles/dispatcher.js";
import { drainQueues, type DrainOptions } from "./facade/drain.js";
import { enqueueJobs } from "./lifecycle/enqueue.js";
import type { EnqueuedJob, EnqueueResult } from "./lifecycle/enqueue-result.js";
import { ClosedError, ConfigurationError, UndeclaredJobError } from "./errors.js";
import type { BlockingConcurrencyOptions, DroppingConcurrencyOptions } from "./definitions/concurrency-options.js";
import { JobPolicies } from "./definitions/job-policies.js";
import {
  checkBoolean,
  checkJobId,
  checkJobName,
  positive,
  positiveInteger,
  rejectUnknownKeys,
} from "./option-checks.js";
import {
  resolveJobOptions,
  type EnqueueOptions,
  type JobArguments,
  type JobHandler,
  type JobOptions,
} from "./definitions/job-definition.js";
import type { SchemaInput, SchemaOutput, StandardSchema } from "./standard-schema.js";
import type { EnqueueArgumentsOf, JobName } from "./definitions/job-names.js";
import { Job } from "./facade/job.js";
import { JobRegistry } from "./definitions/job-registry.js";
import { findJobInfo, type JobInfo } from "./models/job-info.js";
import { QueueOperations } from "./facade/queue-operations.js";
import { FailedJobOperations } from "./facade/failed-job-operations.js";
import { JobOperations } from "./facade/job-operations.js";
import { clearFinishedJobs, type ClearFinishedJobsOptions } from "./facade/clear-finished-jobs.js";
import { callerFile } from "./call-site.js";
import { INSTANCE_BRAND, isBrandedInstance } from "./module-loader.js";
import { HookSet, type LifecycleHooks } from "./processes/hooks.js";
import { CHILD_INSTANCES, RUN_CHILD, type ChildSpec } from "./supervisor/child-protocol.js";
import { runForkChild } from "./supervisor/fork-child.js";
import type { BaseSupervisor } from "./supervisor/base-supervisor.js";
import type { StopOptions, Supervisor } from "./supervisor/supervisor.js";
import { RecurringOperations } from "./facade/recurring-operations.js";
import { JobInspection } from "./facade/job-inspection.js";
import { ReadRouting } from "./facade/read-routing.js";
import { enqueueFlow, type FlowJob, type FlowNode, type FlowOptions } from "./facade/flow.js";
import {
  enqueueBatch,
  findBatch,
  type BatchInfo,
  type BatchJob,
  type BatchEnqueueOptions,
  type BatchResult,
  type NamedBatchJob,
} from "./facade/batch.js";
import { FirmMetrics } from "./facade/firm-metrics.js";
import { countJobEvents } from "./facade/metric-listeners.js";
import { JobEvents } from "./job-events.js";
import { logJobOutcomes } from "./facade/job-outcome-log.js";
import type { JobMiddleware } from "./definitions/job-definition.js";
import { INSTANCE_PARTS, JOB_PARTS, type InstanceParts, type JobParts } from "./facade/internal-access.js";
import { JobWaiters, type EndedJob } from "./processes/job-waiters.js";
import { resolveWaitOptions, type WaitForOptions } from "./facade/wait-for.js";

const DRAIN_KEYS = new Set(["queues", "concurrency", "processHeartbeatInterval"]);
const DISPATCH_KEYS = new Set(["batchSize"]);

/** Options of `firm.enqueue(name, …)`: those of a job's `enqueue`, and the opt-out for undeclared jobs. */
export interface EnqueueByNameOptions extends EnqueueOptions {
  /**
   * Enqueue even though no declaration of the job is loaded in this process: with the default
   * queue and priority, no schema validation and no concurrency limit. Default false (an
   * UndeclaredJobError).
   */
  readonly undeclared?: boolean | undefined;
}

/** Options of a declaration with a Standard Schema: the argument type is the schema's. */
export type SchemaJobOptions<S extends StandardSchema> = Omit<JobOptions<SchemaOutput<S>>, "schema"> & {
  readonly schema: S;
};

/**
 * The entry point: one instance per database. Define jobs on it, enqueue them, run them with
 * `start()` (or `drain()` in scripts and tests), and `close()` it when done. The database is
 * opened on first use.
 *
 * `Jobs` maps the names of its jobs to their argument types, for the calls that take a job by
 * name (`enqueue`, `flow`): `new FirmQueue<{ resize: { photo: string } }>(…)` makes
 * `firm.enqueue("resise", …)` or `{ photo: 1 }` a compile error. Without it any name is accepted,
 * with arguments of any value firm-queue can store ({@link JobArguments}). See docs/jobs.md.
 */
// biome-ignore lint/suspicious/noExplicitAny: the default is `any` so that a FirmQueue with a map is still a `FirmQueue` (for the dashboard, the testing helpers, a function taking one); enqueue and flow treat it as no map
export class FirmQueue<Jobs extends object = any> {
  /** The options this instance runs with, defaults filled in. */
  readonly options: ResolvedOptions;
  /** Pause, resume, list and clear queues. */
  readonly queues: QueueOperations;
  /** See, retry and discard jobs that ran out of attempts. */
  readonly failedJobs: FailedJobOperations;
  /** Add, remove and list recurring tasks at run time; run one now. */
  readonly recurring: RecurringOperations;
  /** Cancel jobs by id or by queue, name and key. */
  readonly jobs: JobOperations;
  /** Read-only views for dashboards and scripts: jobs by state, counts, processes, semaphores, throughput. */
  readonly inspect: JobInspection;
  /**
   * Job lifecycle events, in the process where they happen: `firm.events.on("job.finished", (event) => …)`
   * returns the function that stops listening. See docs/observability.md.
   */
  readonly events: JobEvents;
  /** Prometheus metrics: job counters and histograms, gauges from the database, a prom-client registry. */
  readonly metrics: FirmMetrics;
  private readonly registry = new JobRegistry();
  /** Concurrency limits and retry policies of this instance's job definitions, by job name. */
  private readonly policies: JobPolicies;
  private readonly hooks: HookSet;
  /** Files that created this instance and defined its jobs: what fork-mode children import by default. */
  private readonly definitionFiles: string[] = [];
  private readonly supervisors = new Set<BaseSupervisor>();
  private readonly instanceDatabase: InstanceDatabase;
  /** Where `inspect` reads: the `readUrl` replica, or the primary. */
  private readonly reads: ReadRouting;
  private readonly waiters: JobWaiters;
  private closed = false;

  constructor(options: FirmQueueOptions = {}) {
    this.options = resolveOptions(options);
    this.instanceDatabase = new InstanceDatabase(this.options);
    this.hooks = new HookSet(this.options.logger);
    this.waiters = new JobWaiters(
      () => this.database(),
      this.options.waitPollInterval,
      (error) => void this.hooks.error(error, { where: "waitFor" }),
    );
    this.events = new JobEvents((error, name) => void this.hooks.error(error, { where: `${name} listener` }));
    this.policies = new JobPolicies(this.registry, this.options.logger, this.events);
    if (this.options.logJobOutcomes) logJobOutcomes(this.events, this.options.logger);
    if (options.hooks) this.hooks.add(options.hooks);
    this.queues = new QueueOperations(() => this.database(), this.policies);
    this.failedJobs = new FailedJobOperations(() => this.database(), this.policies);
    this.jobs = new JobOperations(() => this.database(), this.policies);
    this.recurring = new RecurringOperations(
      () => this.database(),
      () => this.jobNames,
      () => {
        for (const supervisor of this.supervisors) supervisor.reloadRecurringTasks();
      },
      {
        policies: this.policies,
        defaultsOf: (name) => this.registry.get(name)?.options ?? resolveJobOptions(name, {}),
      },
    );
    this.reads = new ReadRouting(this.options, () => this.database());
    this.inspect = new JobInspection(
      this.reads,
      this.recurring,
      (name) => this.registry.get(name)?.options.concurrency?.to ?? null,
    );
    this.metrics = new FirmMetrics(this.inspect, this.options.logger, (samples) =>
      countJobEvents(this.events, samples),
    );
    Object.defineProperty(this, INSTANCE_BRAND, { value: true });
    this.recordDefinitionFile();
    ((globalThis as Record<symbol, unknown>)[CHILD_INSTANCES] as unknown[] | undefined)?.push(this);
  }

  /**
   * Add lifecycle hooks: `onStart/onStop/onExit` for supervisors, `onWorkerStart`,
   * `onDispatcherStop`, … for roles, and `onError` for errors in firm-queue's own machinery.
   * Define them where you define your jobs, so fork-mode children get them too.
   */
  addHooks(hooks: LifecycleHooks): this {
    this.hooks.add(hooks);
    return this;
  }

  /**
   * Add middleware around every job's handler: `firm.use(async (context, next) => { …; await next(); … })`.
   * The first added is outermost; each job's own `middleware` option runs inside these. Errors
   * pass through unchanged to the retry policy. Add it where you define your jobs, so fork-mode
   * children get it too. See docs/observability.md.
   */
  use(middleware: JobMiddleware): this {
    this.registry.use(middleware);
    return this;
  }

  /** Whether `value` is a FirmQueue, even one loaded from another copy of this package. */
  static isFirmQueue(value: unknown): value is FirmQueue {
    return isBrandedInstance(value);
  }

  /**
   * Define a job: declare it and implement it in one call (see {@link declareJob} and
   * {@link implement} for a web process that enqueues without loading handlers). `handler` runs
   * with the job's arguments and a context (job id, attempt, an AbortSignal that fires on
   * shutdown). Returns the handle to enqueue it with. Its `enqueue` resolves to an
   * {@link EnqueueResult}; `status: "dropped"` is possible only when the concurrency limit drops
   * jobs on conflict.
   */
  defineJob<S extends StandardSchema, Return>(
    name: string,
    handler: JobHandler<SchemaOutput<S>, Return>,
    options: SchemaJobOptions<S> & { readonly concurrency: DroppingConcurrencyOptions<SchemaOutput<S>> },
  ): Job<SchemaInput<S>, EnqueueResult, SchemaOutput<S>, Awaited<Return>>;
  defineJob<S extends StandardSchema, Return>(
    name: string,
    handler: JobHandler<SchemaOutput<S>, Return>,
    options: SchemaJobOptions<S> & { readonly concurrency?: BlockingConcurrencyOptions<SchemaOutput<S>> },
  ): Job<SchemaInput<S>, EnqueuedJob, SchemaOutput<S>, Awaited<Return>>;
  defineJob<Args = JobArguments, Return = unknown>(
    name: string,
    handler: JobHandler<Args, Return>,
    options: JobOptions<Args> & { readonly concurrency: DroppingConcurrencyOptions<Args>; readonly schema?: never },
  ): Job<Args, EnqueueResult, Args, Awaited<Return>>;
  defineJob<Args = JobArguments, Return = unknown>(
    name: string,
    handler: JobHandler<Args, Return>,
    options?: JobOptions<Args> & {
      readonly concurrency?: BlockingConcurrencyOptions<Args>;
      readonly schema?: never;
    },
  ): Job<Args, EnqueuedJob, Args, Awaited<Return>>;
  defineJob<Args = JobArguments, Return = unknown>(
    name: string,
    handler: JobHandler<Args, Return>,
    options?: JobOptions<Args>,
  ): Job<Args, EnqueueResult, Args, Awaited<Return>>;
  defineJob<Args = JobArguments>(
    name: string,
    handler: JobHandler<Args>,
    options?: JobOptions<Args>,
  ): Job<Args, EnqueueResult> {
    checkJobName(name);
    if (typeof handler !== "function") throw new ConfigurationError(`defineJob("${name}") needs a handler function`);
    const job = this.declare<Args>(name, options, "defineJob");
    this.registry.implement(name, handler);
    return job;
  }

  /**
   * Declare a job without its handler: its name, argument type (or `schema`), queue, priority,
   * retry policy, timeout and concurrency limit. Put declarations in a module with no handler
   * code, import it from the web process to enqueue (typed, with the declaration's concurrency
   * limit applied), and attach the handler in the worker with {@link implement}. A worker that
   * claims a declared job it has no handler for fails it with JobNotImplementedError.
   */
  declareJob<S extends StandardSchema>(
    name: string,
    options: SchemaJobOptions<S> & { readonly concurrency: DroppingConcurrencyOptions<SchemaOutput<S>> },
  ): Job<SchemaInput<S>, EnqueueResult, SchemaOutput<S>>;
  declareJob<S extends StandardSchema>(
    name: string,
    options: SchemaJobOptions<S> & { readonly concurrency?: BlockingConcurrencyOptions<SchemaOutput<S>> },
  ): Job<SchemaInput<S>, EnqueuedJob, SchemaOutput<S>>;
  declareJob<Args = JobArguments>(
    name: string,
    options: JobOptions<Args> & { readonly concurrency: DroppingConcurrencyOptions<Args>; readonly schema?: never },
  ): Job<Args, EnqueueResult>;
  declareJob<Args = JobArguments>(
    name: string,
    options?: JobOptions<Args> & { readonly concurrency?: BlockingConcurrencyOptions<Args>; readonly schema?: never },
  ): Job<Args>;
  declareJob<Args = JobArguments>(name: string, options?: JobOptions<Args>): Job<Args, EnqueueResult>;
  declareJob<Args = JobArguments>(name: string, options?: JobOptions<Args>): Job<Args, EnqueueResult> {
    checkJobName(name);
    return this.declare<Args>(name, options, "declareJob");
  }

  /**
   * Attach the handler of a job declared with {@link declareJob}, in the process that runs it.
   * The handler's argument type comes from the declaration (the schema's output when it has
   * one). Returns the job, typed with what the handler returns (for `job.get`). A job is
   * implemented once per FirmQueue.
   */
  implement<Args, Result extends EnqueueResult, Output, Return>(
    job: Job<Args, Result, Output, unknown>,
    handler: JobHandler<Output, Return>,
  ): Job<Args, Result, Output, Awaited<Return>> {
    if (!(job instanceof Job)) throw new ConfigurationError("implement() takes a job returned by declareJob()");
    if (typeof handler !== "function")
      throw new ConfigurationError(`implement("${job.name}") needs a handler function`);
    if (this.registry.get(job.name)?.options !== job.options) {
      throw new ConfigurationError(
        `implement("${job.name}") takes a job declared on this FirmQueue; this one was declared on another instance`,
      );
    }
    this.registry.implement(job.name, handler);
    this.recordDefinitionFile();
    // The same job; its type now knows what the handler returns.
    return job as Job<Args, Result, Output, Awaited<Return>>;
  }

  private declare<Args>(
    name: string,
    options: JobOptions<Args> | undefined,
    by: "defineJob" | "declareJob",
  ): Job<Args, EnqueueResult> {
    const resolved = resolveJobOptions(name, options as JobOptions | undefined, by);
    this.registry.add({ name, handler: null, options: resolved });
    this.recordDefinitionFile();
    const job = new Job<Args, EnqueueResult>(
      name,
      resolved,
      () => this.database(),
      this.policies,
      (id, options) => this.waitFor(id, options),
    );
    Object.defineProperty(job, JOB_PARTS, {
      get: (): JobParts => {
        const registered = this.registry.get(name)!;
        return {
          handler: registered.handler,
          middleware: this.registry.middlewareFor(registered),
          logger: this.options.logger,
        };
      },
    });
    return job;
  }

  /** Names of the jobs declared (or defined) on this instance. */
  get jobNames(): string[] {
    return this.registry.names();
  }

  /**
   * Enqueue a job by name, for code that does not hold its handle. Defaults, the schema and the
   * concurrency key come from the job's declaration, which must be loaded in this process: a
   * name without one throws UndeclaredJobError, unless `undeclared: true` says to enqueue it
   * anyway with the default queue and priority, no validation and no concurrency limit. Resolves
   * to an {@link EnqueueResult}, as `job.enqueue`. The name and the arguments are typed by the
   * FirmQueue's `Jobs` map when it has one.
   */
  async enqueue<Name extends JobName<Jobs>, Args>(
    name: Name,
    args: EnqueueArgumentsOf<Jobs, Name, Args>,
    options?: EnqueueByNameOptions,
  ): Promise<EnqueueResult> {
    checkJobName(name);
    const { undeclared = false, ...enqueueOptions } = options ?? {};
    checkBoolean(undeclared, `enqueue("${name}") option undeclared`);
    const declared = this.registry.get(name)?.options;
    if (declared === undefined && !undeclared) throw new UndeclaredJobError(name, this.jobNames);
    const defaults = declared ?? resolveJobOptions(name, {});
    const request = { name, args, defaults, ...(options ? { options: enqueueOptions } : {}) };
    const [result] = await enqueueJobs(await this.database(), this.policies, [request], options?.transaction);
    return result!;
  }

  /**
   * Write a tree of jobs in one transaction: each node `{ name, args, options?, children? }` is a
   * job that waits for its children (they run first, as with `dependsOn`). Resolves to the same
   * tree with each node's `id` and `status`. Either every job is written or, on a bad node
   * (InvalidFlowError, naming it) or any other error, none is. `{ transaction }` writes the
   * whole flow in the application's transaction. See docs/workflows.md.
   */
  async flow(root: FlowNode<Jobs>, options?: FlowOptions): Promise<FlowJob> {
    return enqueueFlow(() => this.database(), this.registry, this.policies, root as FlowNode, options);
  }

  /**
   * Write a batch: jobs `[{ name, args, options? }]` in one transaction, and callbacks
   * (`onSuccess`, `onFailure`, `onFinish`: `{ name, args }`) enqueued once, when the last of its
   * jobs has ended. Resolves to the batch's `id` and one result per job. A bad job or callback is
   * an InvalidBatchError naming it, and nothing is written. `{ transaction }` writes the batch in
   * the application's transaction. See docs/workflows.md.
   */
  async batch(jobs: readonly NamedBatchJob<Jobs>[], options?: BatchEnqueueOptions<Jobs>): Promise<BatchResult> {
    return enqueueBatch(
      () => this.database(),
      this.registry,
      this.policies,
      jobs as readonly BatchJob[],
      options as BatchEnqueueOptions,
    );
  }

  /** A batch's state and counts, or null when there is no batch with that id. */
  async getBatch(id: number): Promise<BatchInfo | null> {
    return findBatch(await this.database(), id);
  }

  /**
   * A job and its state, or null when there is no such job (as `inspect.job`; operations that
   * change a job by id throw JobNotFoundError instead). An id that is not a whole number of at
   * least 1 is a ConfigurationError.
   */
  async getJob(id: number): Promise<JobInfo | null> {
    return findJobInfo((await this.database()).db, checkJobId(id, "getJob"));
  }

  /**
   * Wait until job `id` ends, from any process (none of this instance's workers need to run it).
   * Resolves with the finished job (`{ id, state: "finished", result, error: null }`); rejects
   * with JobFailedError (carrying the stored error) when it failed for good, JobCancelledError
   * when it was cancelled, JobNotFoundError when there is no such job, WaitTimeoutError after
   * `timeout` and the signal's reason when `signal` aborts (in both cases the job goes on).
   * Every wait of this instance is answered by one query per `waitPollInterval`; on PostgreSQL a
   * notification answers at once. See docs/waiting.md.
   */
  async waitFor(id: number, options?: WaitForOptions): Promise<EndedJob> {
    const jobId = checkJobId(id, "waitFor");
    return this.waiters.wait(jobId, resolveWaitOptions(options, "waitFor"));
  }

  /**
   * Create or update firm-queue's tables. Returns the migrations applied (none when up to date).
   * Logs one line: at info what was applied, at debug that nothing was to do.
   */
  async migrate(): Promise<string[]> {
    const database = await this.database();
    const applied = await migrate(database);
    if (applied.length === 0) this.options.logger.debug("schema up to date", {});
    else this.options.logger.info("migrations applied", { count: applied.length, versions: applied.join(", ") });
    return applied;
  }

  /** Run ready jobs in this process until none are left; returns how many ran. */
  async drain(options: DrainOptions = {}): Promise<number> {
    rejectUnknownKeys(options, DRAIN_KEYS, "drain option");
    return drainQueues(await this.database(), this.registry, this.policies, {
      queues: options.queues ?? "*",
      concurrency: positiveInteger(options.concurrency ?? 1, "drain option concurrency"),
      heartbeatInterval: positive(
        toTimerMilliseconds(options.processHeartbeatInterval ?? 60_000, "drain option processHeartbeatInterval"),
        "drain option processHeartbeatInterval",
      ),
      preserveFinishedJobs: this.options.preserveFinishedJobs,
      logger: this.options.logger,
    });
  }

  /**
   * Dispatch every due scheduled job now (to ready, or blocked by its concurrency limit);
   * returns how many were dispatched.
   */
  async dispatch(options: { batchSize?: number } = {}): Promise<number> {
    rejectUnknownKeys(options, DISPATCH_KEYS, "dispatch option");
    return dispatchAllDue(
      await this.database(),
      this.policies,
      positiveInteger(options.batchSize ?? 500, "dispatch option batchSize"),
    );
  }

  /**
   * Delete finished jobs that finished more than `olderThan` ago (a duration, or a Date to delete
   * those finished before it; default: the `clearFinishedJobsAfter` option), optionally only of
   * one job `name`, `batchSize` per transaction (default 500). Returns how many were deleted.
   */
  async clearFinishedJobs(options: ClearFinishedJobsOptions = {}): Promise<number> {
    return clearFinishedJobs(await this.database(), options, this.options.clearFinishedJobsAfter);
  }

  /**
   * Start workers and dispatchers, and a scheduler when `recurring` tasks or `scheduler` options
   * are given: in this process (`mode: "async"`, the default) or in child processes
   * (`mode: "fork"`). Stop them with the returned supervisor's `stop()`. Recurring tasks are
   * checked before anything starts: a bad one throws a RecurringTaskError naming it.
   */
  async start(options?: StartOptions): Promise<Supervisor> {
    const supervisor = await startSupervisor(
      {
        shared: {
          databaseUrl: this.options.databaseUrl,
          registry: this.registry,
          policies: this.policies,
          preserveFinishedJobs: this.options.preserveFinishedJobs,
          clearFinishedJobsAfter: this.options.clearFinishedJobsAfter,
          logger: this.options.logger,
          hooks: this.hooks,
          definitionFiles: this.definitionFiles,
          metrics: this.metrics,
        },
        ownHandle: this.options.database !== undefined,
        poolSize: this.options.poolSize,
        jobNames: this.jobNames,
        database: (poolSize) => this.database(poolSize),
      },
      options,
    );
    this.supervisors.add(supervisor);
    void supervisor.stopped.then(() => this.supervisors.delete(supervisor));
    return {
      id: supervisor.id,
      mode: supervisor.mode,
      roleCount: supervisor.roleCount,
      stopped: supervisor.stopped,
      stop: (stopOptions?: StopOptions) => supervisor.stop(stopOptions),
    };
  }

  /** Stop anything still running and close the database pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.supervisors].map((supervisor) => supervisor.stop()));
    await this.waiters.close();
    await this.reads.close();
    await this.instanceDatabase.close();
  }

  /** @internal What firm-queue/testing reads of this instance (see facade/internal-access.ts). */
  get [INSTANCE_PARTS](): InstanceParts {
    return {
      registry: this.registry,
      policies: this.policies,
      logger: this.options.logger,
      preserveFinishedJobs: this.options.preserveFinishedJobs,
    };
  }

  /** @internal Fork-mode children run their role through this (see supervisor/child-entry.ts). */
  async [RUN_CHILD](spec: ChildSpec): Promise<void> {
    await runForkChild(
      {
        options: this.options,
        registry: this.registry,
        policies: this.policies,
        hooks: this.hooks,
        database: (poolSize) => this.database(poolSize),
        close: () => this.close(),
        metrics: this.metrics,
      },
      spec,
    );
  }

  private recordDefinitionFile(): void {
    const file = callerFile();
    if (file !== undefined && !this.definitionFiles.includes(file)) this.definitionFiles.push(file);
  }

  /**
   * @internal The open database, opening it on first use. Not part of the public API: firm-queue's
   * own layers and tests use it. `poolSize`: the connections the caller's work needs (see
   * connection-budget.ts); the pool grows to it unless the `poolSize` option fixes it.
   */
  async database(poolSize?: number): Promise<Database> {
    if (this.closed) throw new ClosedError("database");
    return this.instanceDatabase.get(poolSize);
  }
}
