import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import { enqueueJobs } from "../lifecycle/enqueue.js";
import { ConfigurationError } from "../errors.js";
import type { EnqueueOptions, ResolvedJobOptions } from "../definitions/job-definition.js";

/**
 * A defined job, returned by `firm.defineJob`: enqueue it with typed arguments. `Result` is what
 * `enqueue` gives back: the job id, or `number | null` for a definition whose concurrency limit
 * discards jobs on conflict (null: the job was dropped).
 */
export class Job<Args, Result extends number | null = number> {
  constructor(
    /** The job's name, stored with every job row. */
    readonly name: string,
    /** The definition's options, defaults filled in. */
    readonly options: ResolvedJobOptions,
    private readonly database: () => Promise<Database>,
    private readonly policies: JobPolicies,
  ) {}

  /**
   * Write one job and return its id. It runs now, or later with `wait` / `at`. Null only when
   * the definition discards on conflict and the job's key had no free slot: nothing was written.
   */
  async enqueue(args: Args, options?: EnqueueOptions): Promise<Result> {
    const [id] = await this.enqueueMany([args], options);
    return id as Result;
  }

  /**
   * Write many jobs at once (one multi-row INSERT per thousand) and return their ids in order,
   * with null in the place of each discarded job. `options` apply to every job.
   */
  async enqueueAll(argsList: readonly Args[], options?: EnqueueOptions): Promise<Result[]> {
    if (!Array.isArray(argsList))
      throw new ConfigurationError(`enqueueAll("${this.name}") takes an array of arguments`);
    return (await this.enqueueMany(argsList, options)) as Result[];
  }

  private async enqueueMany(
    argsList: readonly Args[],
    options: EnqueueOptions | undefined,
  ): Promise<(number | null)[]> {
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
