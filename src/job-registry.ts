import { DuplicateJobError } from "./errors.js";
import type { JobHandler, ResolvedJobOptions } from "./job-definition.js";

/** A job known to this process: its name, handler and options. */
export interface RegisteredJob {
  readonly name: string;
  readonly handler: JobHandler<any>;
  readonly options: ResolvedJobOptions;
}

/**
 * How model code reaches a job's definition by name (a {@link JobRegistry} is one): recording a
 * failed attempt needs the job's retry policy.
 */
export interface DefinitionLookup {
  get(name: string): RegisteredJob | undefined;
}

/** The jobs defined on one FirmQueue instance, by name. */
export class JobRegistry implements DefinitionLookup {
  private readonly jobs = new Map<string, RegisteredJob>();

  add(job: RegisteredJob): void {
    if (this.jobs.has(job.name)) throw new DuplicateJobError(job.name);
    this.jobs.set(job.name, job);
  }

  get(name: string): RegisteredJob | undefined {
    return this.jobs.get(name);
  }

  names(): string[] {
    return [...this.jobs.keys()].sort();
  }
}
