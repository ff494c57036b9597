import { ConfigurationError } from "../errors.js";
import {
  JOB_ENQUEUE_OPTION_KEYS,
  type EnqueueAllOptions,
  type EnqueueOptions,
  type JobEnqueueOptions,
} from "../definitions/job-definition.js";
import { rejectUnknownKeys } from "../option-checks.js";
import { checkEnqueueOptions } from "../lifecycle/enqueue.js";

/**
 * The options of each job of an `enqueueAll`: the shared options, with the job's own `each`
 * entry over them. Every entry is checked before anything is written; an entry may not name a
 * transaction (the whole batch shares one).
 */
export function optionsOfEach<Args>(
  jobName: string,
  argsList: readonly Args[],
  options: EnqueueAllOptions<Args> | undefined,
): (EnqueueOptions | undefined)[] {
  if (options === undefined) return argsList.map(() => undefined);
  if (typeof options !== "object" || options === null)
    throw new ConfigurationError(`enqueueAll("${jobName}") options must be an object`);
  const { each, ...shared } = options;
  // With no jobs nothing below would look at the options: check them all the same.
  if (argsList.length === 0) checkEnqueueOptions(jobName, shared);
  if (each === undefined) return argsList.map(() => shared);
  if (Array.isArray(each) && each.length !== argsList.length) {
    throw new ConfigurationError(
      `enqueueAll("${jobName}") option each has ${each.length} entries for ${argsList.length} jobs: give one per job (undefined for none)`,
    );
  }
  if (!Array.isArray(each) && typeof each !== "function") {
    throw new ConfigurationError(
      `enqueueAll("${jobName}") option each must be a list of options, one per job, or a function (args, index) => options`,
    );
  }
  return argsList.map((args, index) => {
    const own: JobEnqueueOptions | undefined =
      typeof each === "function" ? each(args, index) : (each as readonly (JobEnqueueOptions | undefined)[])[index];
    if (own === undefined) return shared;
    rejectUnknownKeys(own, JOB_ENQUEUE_OPTION_KEYS, `enqueueAll("${jobName}") each[${index}] option`);
    // A job's own `wait` or `at` replaces the shared one rather than clashing with it.
    const base = own.wait !== undefined || own.at !== undefined ? withoutTime(shared) : shared;
    return { ...base, ...own };
  });
}

function withoutTime(options: EnqueueOptions): EnqueueOptions {
  const { wait: _wait, at: _at, ...rest } = options;
  return rest;
}
