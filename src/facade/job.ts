import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import { enqueueJobs } from "../lifecycle/enqueue.js";
import { ConfigurationError } from "../errors.js";
import type { EnqueueOptions, ResolvedJobOptions } from "../definitions/job-definition.js";
import type { EnqueuedJob, EnqueueResult } from "../lifecycle/enqueue-result.js";

/**
 * A defined job, returned by `firm.defineJob`: enqueue it with typed arguments. `Result` is what
 * `enqueue` gives back (see {@link EnqueueResult}): created, or matched by its unique key; a
 * definition whose concurrency limit discards jobs on conflict may also get `dropped`.
 */
export class Job<Args, Result extends EnqueueResult = EnqueuedJob> {
  constructor(
    /** The job's name, stored with every job row. */
    readonly name: string,
    /** The definition's options, defaults filled in. */
    readonly options: ResolvedJobOptions,
    private readonly database: () => Promise<Database>,
    private readonly policies: JobPolicies,
  ) {}

  /**
   * Write one job. It runs now, or later with `wait` / `at`. The result says whether it was
   * created (`status: "created"`, its `id`), matched an existing job by its unique key
   * (`duplicate` or `replaced`, with that job's `id`), or was dropped by its concurrency limit.
   */
  async enqueue(args: Args, options?: EnqueueOptions): Promise<Result> {
    const [result] = await this.enqueueMany([args], options);
    return result as Result;
  }

  /**
   * Write many jobs at once (one multi-row INSERT per thousand) and return one result per job,
   * in order (as `enqueue`). Unique keys are honoured, between these jobs too: a later job with
   * the key of an earlier one is its duplicate (or replaces it). `options` apply to every job.
   */
  async enqueueAll(argsList: readonly Args[], options?: EnqueueOptions): Promise<Result[]> {
    if (!Array.isArray(argsList))
      throw new ConfigurationError(`enqueueAll("${this.name}") takes an array of arguments`);
    return (await this.enqueueMany(argsList, options)) as Result[];
  }

  private async enqueueMany(argsList: readonly Args[], options: EnqueueOptions | undefined): Promise<EnqueueResult[]> {
    const database = await this.database();
    const requests = argsList.map((args) => ({
      name: this.name,
      args,
      defaults: this.options,
      ...(options ? { options } : {}),
    }));
    return enqueueJobs(database, this.policies, requests, options?.transaction);
  }
}
