import type { ResolvedConcurrency } from "./concurrency-options.js";
import { ConfigurationError, DuplicateJobError } from "../errors.js";
import type { JobHandler, JobMiddleware, ResolvedJobOptions } from "./job-definition.js";

/** A job known to this process: its name, handler and options. */
export interface RegisteredJob {
  readonly name: string;
  // biome-ignore lint/suspicious/noExplicitAny: the registry holds handlers of every argument type
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
  private instanceMiddleware: readonly JobMiddleware[] = [];

  /** Add middleware around every job's handler (`firm.use`), outside each job's own; the first added is outermost. */
  use(middleware: JobMiddleware): void {
    if (typeof middleware !== "function")
      throw new ConfigurationError("use() needs a middleware function (context, next) => …");
    this.instanceMiddleware = [...this.instanceMiddleware, middleware];
  }

  /** The middleware `job`'s handler runs in: the instance's, then the job's own. */
  middlewareFor(job: RegisteredJob): readonly JobMiddleware[] {
    const own = job.options.middleware;
    if (own.length === 0) return this.instanceMiddleware;
    return this.instanceMiddleware.length === 0 ? own : [...this.instanceMiddleware, ...own];
  }

  add(job: RegisteredJob): void {
    if (this.jobs.has(job.name)) throw new DuplicateJobError(job.name);
    if (job.options.concurrency) this.checkGroup(job.name, job.options.concurrency);
    this.jobs.set(job.name, job);
  }

  get(name: string): RegisteredJob | undefined {
    return this.jobs.get(name);
  }

  names(): string[] {
    return [...this.jobs.keys()].sort();
  }

  /** The concurrency limit of a defined job; undefined when it is not defined here, null when it has none. */
  concurrencyOf(name: string): ResolvedConcurrency | null | undefined {
    return this.jobs.get(name)?.options.concurrency;
  }

  /** Jobs sharing a group share slots, so they must agree on how many and for how long. */
  private checkGroup(name: string, concurrency: ResolvedConcurrency): void {
    for (const other of this.jobs.values()) {
      const theirs = other.options.concurrency;
      if (!theirs || theirs.group !== concurrency.group) continue;
      if (theirs.to !== concurrency.to || theirs.duration !== concurrency.duration) {
        throw new ConfigurationError(
          `Jobs "${other.name}" and "${name}" share concurrency group "${concurrency.group}" but not its limit ` +
            `(to ${theirs.to} vs ${concurrency.to}, duration ${theirs.duration} ms vs ${concurrency.duration} ms): give them the same to and duration`,
        );
      }
    }
  }
}
