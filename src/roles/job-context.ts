import type { ClaimedJob } from "../database/claimed-job.js";
import { toDate } from "../database/schema.js";
import type { BatchJob, BatchJobAdded, DependencyResult, JobBatch, JobContext } from "../definitions/job-definition.js";
import type { Logger } from "../logger.js";
import { bindLogger } from "../logger-adapter.js";

/**
 * The context a handler gets for one attempt of `job`. `enqueuedAt`, `logger` and `signal` are
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
 * `enqueuedAt`, `logger` and `signal` are own accessor properties, every instance sharing the
 * same getter functions, which read the instance's private state: getters written in an object
 * literal are new closures for each object, which V8 cannot share a shape between, so each
 * context was a dictionary of about 800 bytes; these are about 150 (bench/results/history.md,
 * "Hot path, sixth pass"). Defining an accessor on an instance is still a call into the runtime
 * of about 200 ns, so what is cheap to make at once is a plain property instead:
 * `dependencyResults` (one closure) and `batch` (undefined for most jobs)
 * (bench/results/2026-12-07-worker-cpu).
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
  readonly #logger: Logger;
  readonly #signal: () => AbortSignal;
  #enqueuedAt: Date | undefined;
  #bound: Logger | undefined;

  static readonly #enqueuedAtAccessor: PropertyDescriptor = {
    enumerable: true,
    get(this: HandlerContext) {
      this.#enqueuedAt ??= toDate(this.#createdAt);
      return this.#enqueuedAt;
    },
  };

  // Every line the handler logs says which job (and which attempt) wrote it.
  static readonly #loggerAccessor: PropertyDescriptor = {
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
  };

  static readonly #signalAccessor: PropertyDescriptor = {
    enumerable: true,
    get(this: HandlerContext) {
      return this.#signal();
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
    const jobId = Number(job.id);
    this.jobId = jobId;
    this.name = job.class_name;
    this.queue = job.queue_name;
    this.priority = job.priority;
    this.attempt = job.attempts + 1;
    this.progress = progress;
    this.#createdAt = job.created_at;
    this.#logger = logger;
    this.#signal = signal;
    // One call each: a descriptor map (Object.defineProperties) costs more than the three.
    Object.defineProperty(this, "enqueuedAt", HandlerContext.#enqueuedAtAccessor);
    Object.defineProperty(this, "logger", HandlerContext.#loggerAccessor);
    Object.defineProperty(this, "signal", HandlerContext.#signalAccessor);
    (this as { dependencyResults: () => Promise<DependencyResult[]> }).dependencyResults = () => dependencies(jobId);
    const batchId = job.batch_id === null || job.batch_id === undefined ? null : Number(job.batch_id);
    (this as { batch: JobBatch | undefined }).batch =
      batchId === null || batches === undefined ? undefined : { id: batchId, add: (jobs) => batches(batchId, jobs) };
  }
}
