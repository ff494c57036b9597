/**
 * The rows an enqueue writes, as the database layer's statements take them (the portable
 * multi-row INSERTs of models/ and a dialect's `bulkInsert`). models/ re-exports them.
 */

/** What enqueue knows about a job before it has an id. */
export interface NewJob {
  readonly queueName: string;
  readonly className: string;
  /** JSON text from `serializeArguments`. */
  readonly arguments: string;
  readonly priority: number;
  /** When the job may run; `now` for jobs due at once. */
  readonly scheduledAt: Date;
  readonly concurrencyKey: string | null;
  /** The unique key the job is enqueued with, if any (its hold lives in firm_queue_job_keys). */
  readonly jobKey?: string | null;
  /** The OpenTelemetry context of the enqueue, as JSON text (see tracing.ts); absent: none. */
  readonly traceContext?: string | null;
  /** Dependencies not ended yet (above 0: the job is written pending); absent: 0. */
  readonly unmetDependencies?: number;
  /** The job has dependents from the start (a child in a flow); absent: false. */
  readonly hasDependents?: boolean;
  /** The budget of the job's own rate limit; absent or null: none. */
  readonly rateLimitKey?: string | null;
  /** The batch the job belongs to, or whose callback it is; absent or null: none. */
  readonly batchId?: number | null;
}

/** A job about to become ready: what the ready row copies from the job for fast polling. */
export interface ReadyJob {
  readonly id: number;
  readonly queueName: string;
  readonly priority: number;
}

/**
 * A dependency edge to insert, as a statement writes it (models/job-dependency.ts's
 * `NewDependency` is this with its policy and state narrowed to their names).
 */
export interface EdgeInsert {
  readonly jobId: number;
  readonly dependencyId: number;
  readonly position: number;
  readonly onFailure: string;
  readonly dependencyName: string;
  readonly state: string | null;
  readonly result: string | null;
}
