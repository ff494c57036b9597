import type { ClaimedJob } from "../database/claimed-job.js";
import { toDate } from "../database/schema.js";
import type { BatchJob, BatchJobAdded, DependencyResult, JobBatch, JobContext } from "../definitions/job-definition.js";
import type { Logger } from "../logger.js";
import { bindLogger } from "../logger-adapter.js";

/**
 * The context a handler gets for one attempt of `job`. `enqueuedAt`, `logger`, `signal`,
 * `dependencyResults` and `batch` are
 * made when first read (and then kept): most handlers read none of them, and building a bound
 * logger, a Date and an AbortSignal for every job was a measurable share of a busy worker's time
 * (bench/results/history.md, "Hot path, third pass"). They are the object's own enumerable properties,
 * so spreading the context (`{ ...context }`) still copies them.
 */
export function jobContext(
  job: ClaimedJob,
  logger: Logger,
  progress: (value: unknown) => void,
  signal: () => AbortSignal,
  dependencies: DependencyReader,
  batches?: BatchAdder,
): JobContext {
  return new HandlerContext(job, logger, progress, signal, dependencies, batches);
}

/** Reads a job's dependencies for `context.dependencyResults()` (one reader per worker). */
export type DependencyReader = (jobId: number) => Promise<DependencyResult[]>;

/** Writes jobs into a batch for `context.batch.add` (one per worker). */
export type BatchAdder = (batchId: number, jobs: readonly BatchJob[]) => Promise<BatchJobAdded[]>;

/**
 * Every instance gets the same four getter functions, which read the instance's private state:
 * getters written in an object literal are new closures for each object, which V8 cannot share a
 * shape between, so each context was a dictionary of about 800 bytes; these are about 150
 * (bench/results/history.md, "Hot path, sixth pass").
 */
class HandlerContext {
  readonly jobId: number;
  readonly name: string;
  readonly queue: string;
  readonly priority: number;
  readonly attempt: number;
  readonly progress: (value: unknown) => void;
  declare readonly enqueuedAt: Date;
  declare readonly logger: Logger;
  declare readonly signal: AbortSignal;
  declare readonly dependencyResults: () => Promise<DependencyResult[]>;
  declare readonly batch: JobBatch | undefined;
  readonly #createdAt: ClaimedJob["created_at"];
  readonly #batchId: number | null;
  readonly #batches: BatchAdder | undefined;
  #batch: JobBatch | undefined;
  readonly #logger: Logger;
  readonly #signal: () => AbortSignal;
  readonly #dependencies: DependencyReader;
  #enqueuedAt: Date | undefined;
  #bound: Logger | undefined;
  #readDependencies: (() => Promise<DependencyResult[]>) | undefined;

  static readonly #lazy: PropertyDescriptorMap = {
    enqueuedAt: {
      enumerable: true,
      get(this: HandlerContext) {
        this.#enqueuedAt ??= toDate(this.#createdAt);
        return this.#enqueuedAt;
      },
    },
    // Every line the handler logs says which job (and which attempt) wrote it.
    logger: {
      enumerable: true,
      get(this: HandlerContext) {
        this.#bound ??= bindLogger(this.#logger, {
          jobId: this.jobId,
          job: this.name,
          queue: this.queue,
          attempt: this.attempt,
        });
        return this.#bound;
      },
    },
    signal: {
      enumerable: true,
      get(this: HandlerContext) {
        return this.#signal();
      },
    },
    // A getter, like the rest, so that a spread context (middleware's) still has it.
    dependencyResults: {
      enumerable: true,
      get(this: HandlerContext) {
        this.#readDependencies ??= () => this.#dependencies(this.jobId);
        return this.#readDependencies;
      },
    },
    batch: {
      enumerable: true,
      get(this: HandlerContext) {
        const id = this.#batchId;
        const batches = this.#batches;
        if (id === null || batches === undefined) return undefined;
        this.#batch ??= { id, add: (jobs) => batches(id, jobs) };
        return this.#batch;
      },
    },
  };

  constructor(
    job: ClaimedJob,
    logger: Logger,
    progress: (value: unknown) => void,
    signal: () => AbortSignal,
    dependencies: DependencyReader,
    batches: BatchAdder | undefined,
  ) {
    this.jobId = Number(job.id);
    this.name = job.class_name;
    this.queue = job.queue_name;
    this.priority = job.priority;
    this.attempt = job.attempts + 1;
    this.progress = progress;
    this.#createdAt = job.created_at;
    this.#logger = logger;
    this.#signal = signal;
    this.#dependencies = dependencies;
    this.#batchId = job.batch_id === null || job.batch_id === undefined ? null : Number(job.batch_id);
    this.#batches = batches;
    Object.defineProperties(this, HandlerContext.#lazy);
  }
}
