import type { Database } from "./database/connection.js";
import type { Db } from "./database/dialect.js";
import { enqueueJobs } from "./enqueue.js";
import type { EnqueueOptions, ResolvedJobOptions } from "./job-definition.js";

/** A defined job, returned by `firm.defineJob`: enqueue it with typed arguments. */
export class Job<Args> {
  constructor(
    /** The job's name, stored with every job row. */
    readonly name: string,
    /** The definition's options, defaults filled in. */
    readonly options: ResolvedJobOptions,
    private readonly database: () => Promise<Database>,
  ) {}

  /** Write one job and return its id. It runs now, or later with `wait` / `at`. */
  async enqueue(args: Args, options?: EnqueueOptions): Promise<number> {
    const [id] = await this.enqueueMany([args], options);
    return id!;
  }

  /**
   * Write many jobs at once (one multi-row INSERT per thousand) and return their ids in order.
   * `options` apply to every job.
   */
  async enqueueAll(argsList: readonly Args[], options?: EnqueueOptions): Promise<number[]> {
    if (!Array.isArray(argsList)) throw new TypeError(`enqueueAll("${this.name}") takes an array of arguments`);
    return this.enqueueMany(argsList, options);
  }

  private async enqueueMany(argsList: readonly Args[], options: EnqueueOptions | undefined): Promise<number[]> {
    const database = await this.database();
    const requests = argsList.map((args) => ({ name: this.name, args, defaults: this.options, ...(options ? { options } : {}) }));
    return enqueueJobs(database, requests, options?.transaction as Db | undefined);
  }
}
