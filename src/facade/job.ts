import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import { enqueueJobs } from "../lifecycle/enqueue.js";
import { ConfigurationError } from "../errors.js";
import type { EnqueueAllOptions, EnqueueOptions, ResolvedJobOptions } from "../definitions/job-definition.js";
import type { EnqueuedJob, EnqueueResult } from "../lifecycle/enqueue-result.js";
import { optionsOfEach } from "./bulk-options.js";
import { JobDroppedError } from "../errors.js";
import { resolveWaitOptions, type EndedJob, type WaitForOptions } from "./wait-for.js";
import { findJobInfo, type JobInfo } from "../models/job-info.js";
import { checkJobId } from "../option-checks.js";

/** Options of `job.enqueueAndWait`: where and when the job runs, and how long to wait for it. */
export interface EnqueueAndWaitOptions extends Omit<EnqueueOptions, "transaction">, WaitForOptions {}

/**
 * A declared job, returned by `firm.declareJob` and `firm.defineJob`: enqueue it with typed
 * arguments, from any process. `Result` is what `enqueue` gives back (see {@link EnqueueResult}):
 * created, or matched by its unique key; a declaration whose concurrency limit drops jobs on
 * conflict may also get `dropped`. `Output` is what its handler receives: `Args` itself, or what
 * the declaration's `schema` makes of them. `Return` is what its handler returns, awaited (the
 * type of `result` in {@link Job.get}): known from `defineJob`'s handler or `firm.implement`'s,
 * `unknown` for a job only declared.
 */
export class Job<Args, Result extends EnqueueResult = EnqueuedJob, Output = Args, Return = unknown> {
  /** Type-level only (never set): the argument, handler and return types, for `firm.implement`. */
  declare readonly types?: { readonly args: Args; readonly output: Output; readonly return: Return };

  constructor(
    /** The job's name, stored with every job row. */
    readonly name: string,
    /** The declaration's options, defaults filled in. */
    readonly options: ResolvedJobOptions,
    private readonly database: () => Promise<Database>,
    private readonly policies: JobPolicies,
    private readonly waitFor: (id: number, options?: WaitForOptions) => Promise<EndedJob>,
  ) {}

  /**
   * Write one job. It runs now, or later with `wait` / `at`. The result says whether it was
   * created (`status: "created"`, its `id`), matched an existing job by its unique key
   * (`duplicate` or `replaced`, with that job's `id`), or was dropped by its concurrency limit.
   */
  async enqueue(args: Args, options?: EnqueueOptions): Promise<Result> {
    const [result] = await this.enqueueMany([args], [options], options);
    return result as Result;
  }

  /**
   * Enqueue one job and wait until it ends: `enqueue` followed by `firm.waitFor` (see there for
   * how the wait settles). A job matched by its unique key is waited for as it is. Not inside an
   * application transaction: the job would stay invisible to the wait until that commits, so a
   * `transaction` option is a ConfigurationError; a job dropped by its concurrency limit is a
   * JobDroppedError.
   */
  async enqueueAndWait(args: Args, options?: EnqueueAndWaitOptions): Promise<EndedJob> {
    const { timeout, signal, ...enqueueOptions } = options ?? {};
    if (Object.hasOwn(enqueueOptions, "transaction")) {
      throw new ConfigurationError(
        `enqueueAndWait("${this.name}") cannot take a transaction: the job would not exist for the wait before it commits`,
      );
    }
    const waitOptions = { ...(timeout === undefined ? {} : { timeout }), ...(signal === undefined ? {} : { signal }) };
    // Bad wait options fail before anything is written.
    resolveWaitOptions(waitOptions, `enqueueAndWait("${this.name}")`);
    const result = await this.enqueue(args, enqueueOptions);
    if (result.id === null) throw new JobDroppedError(this.name);
    return this.waitFor(result.id, waitOptions);
  }

  /**
   * Write many jobs at once (one multi-row INSERT per thousand) and return one result per job,
   * in order (as `enqueue`). Unique keys are honoured, between these jobs too: a later job with
   * the key of an earlier one is its duplicate (or replaces it). `options` apply to every job;
   * `options.each` gives single jobs their own `queue`, `priority`, `wait`, `at` or `key`.
   */
  async enqueueAll(argsList: readonly Args[], options?: EnqueueAllOptions<Args>): Promise<Result[]> {
    if (!Array.isArray(argsList))
      throw new ConfigurationError(`enqueueAll("${this.name}") takes an array of arguments`);
    return (await this.enqueueMany(argsList, optionsOfEach(this.name, argsList, options), options)) as Result[];
  }

  /**
   * One job of this name by id, as `firm.getJob` reads it (a union on `state`), with `result`
   * typed as this job's handler returns it: `if (info?.state === "finished") info.result`. Null
   * when there is no such job, or when the job with that id has another name. Reads the primary
   * database, as `getJob` does.
   */
  async get(id: number): Promise<JobInfo<Return> | null> {
    const jobId = checkJobId(id, `get("${this.name}")`);
    const info = await findJobInfo((await this.database()).db, jobId);
    return info !== null && info.name === this.name ? (info as JobInfo<Return>) : null;
  }

  private async enqueueMany(
    argsList: readonly Args[],
    optionsList: readonly (EnqueueOptions | undefined)[],
    shared: EnqueueOptions | undefined,
  ): Promise<EnqueueResult[]> {
    const database = await this.database();
    const requests = argsList.map((args, index) => {
      const options = optionsList[index];
      return { name: this.name, args, defaults: this.options, ...(options ? { options } : {}) };
    });
    return enqueueJobs(database, this.policies, requests, shared?.transaction);
  }
}
