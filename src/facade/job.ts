import type { JobPolicies } from "../definitions/job-policies.js";
import type { Database } from "../database/connection.js";
import { enqueueJobs } from "../lifecycle/enqueue.js";
import { ConfigurationError } from "../errors.js";
import type { EnqueueAllOptions, EnqueueOptions, ResolvedJobOptions } from "../definitions/job-definition.js";
import { optionsOfEach } from "./bulk-options.js";

/**
 * A declared job, returned by `firm.declareJob` and `firm.defineJob`: enqueue it with typed
 * arguments, from any process. `Result` is what `enqueue` gives back: the job id, or
 * `number | null` for a declaration whose concurrency limit drops jobs on conflict (null: the
 * job was dropped). `Output` is what its handler receives: `Args` itself, or what the
 * declaration's `schema` makes of them.
 */
export class Job<Args, Result extends number | null = number, Output = Args> {
  /** Type-level only (never set): the argument and handler types, for `firm.implement`. */
  declare readonly types?: { readonly args: Args; readonly output: Output };

  constructor(
    /** The job's name, stored with every job row. */
    readonly name: string,
    /** The declaration's options, defaults filled in. */
    readonly options: ResolvedJobOptions,
    private readonly database: () => Promise<Database>,
    private readonly policies: JobPolicies,
  ) {}

  /**
   * Write one job and return its id. It runs now, or later with `wait` / `at`. Null only when
   * the declaration drops jobs on conflict and the job's key had no free slot: nothing was written.
   */
  async enqueue(args: Args, options?: EnqueueOptions): Promise<Result> {
    const [id] = await this.enqueueMany([args], [options], options);
    return id as Result;
  }

  /**
   * Write many jobs at once (one multi-row INSERT per thousand) and return their ids in order,
   * with null in the place of each dropped job. `options` apply to every job; `options.each`
   * gives single jobs their own `queue`, `priority`, `wait` or `at`.
   */
  async enqueueAll(argsList: readonly Args[], options?: EnqueueAllOptions<Args>): Promise<Result[]> {
    if (!Array.isArray(argsList))
      throw new ConfigurationError(`enqueueAll("${this.name}") takes an array of arguments`);
    return (await this.enqueueMany(argsList, optionsOfEach(this.name, argsList, options), options)) as Result[];
  }

  private async enqueueMany(
    argsList: readonly Args[],
    optionsList: readonly (EnqueueOptions | undefined)[],
    shared: EnqueueOptions | undefined,
  ): Promise<(number | null)[]> {
    const database = await this.database();
    const requests = argsList.map((args, index) => {
      const options = optionsList[index];
      return { name: this.name, args, defaults: this.options, ...(options ? { options } : {}) };
    });
    return enqueueJobs(database, this.policies, requests, shared?.transaction);
  }
}
