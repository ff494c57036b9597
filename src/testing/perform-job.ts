import { randomInt } from "node:crypto";
import type { ClaimedJob } from "../database/claimed-job.js";
import { validateArguments } from "../definitions/argument-validation.js";
import type { DependencyResult } from "../definitions/job-definition.js";
import { runThroughMiddleware } from "../definitions/job-middleware.js";
import { ConfigurationError, JobNotImplementedError } from "../errors.js";
import { JOB_PARTS, type JobParts } from "../facade/internal-access.js";
import type { Job } from "../facade/job.js";
import type { EnqueueResult } from "../lifecycle/enqueue-result.js";
import type { Logger } from "../logger.js";
import { checkPriority, checkQueueName, positiveInteger, rejectUnknownKeys } from "../option-checks.js";
import { jobContext } from "../roles/job-context.js";
import { encodeProgress, encodeResult } from "../roles/job-result.js";
import { deserializeArguments, serializeArguments } from "../serialization.js";

/** Options of {@link performJob}: what the handler's context says. Every key is optional. */
export interface PerformJobOptions {
  /** The context's `jobId`. Default: a random id. */
  readonly jobId?: number;
  /** The context's `attempt` (1 for the first). Default 1. */
  readonly attempt?: number;
  /** The context's `queue`. Default: the definition's. */
  readonly queue?: string;
  /** The context's `priority`. Default: the definition's. */
  readonly priority?: number;
  /** The context's `signal`: abort it to test how the handler stops. Default: one that never aborts. */
  readonly signal?: AbortSignal;
  /** Where the context's `logger` writes (bound to the job, as in a worker). Default: the FirmQueue's logger. */
  readonly logger?: Logger;
  /** What the context's `dependencyResults()` returns (see docs/workflows.md). Default: none. */
  readonly dependencyResults?: readonly DependencyResult[];
}

/** What {@link performJob} gives back. */
export interface PerformedJob {
  /** What the handler returned, after the round trip through JSON a stored result makes (dates and bigints kept). */
  readonly result: unknown;
  /** Every value the handler passed to `context.progress()`, in order (each checked as a worker checks it). */
  readonly progress: readonly unknown[];
}

const OPTION_KEYS = new Set(["jobId", "attempt", "queue", "priority", "signal", "logger", "dependencyResults"]);

/**
 * Run `job`'s handler once with `args`, in this process and without a database: the arguments
 * go through the JSON round trip and the schema a worker applies, the handler runs inside the
 * FirmQueue's and the job's middleware with a real context (`progress`, `signal`, a `logger`
 * bound to the job, `attempt`), and its result is checked as a worker would store it. Resolves
 * with the result and the progress reported; rejects with what the handler (or a middleware, or
 * the schema) threw, as a worker would record it.
 */
export async function performJob<Args>(
  job: Job<Args, EnqueueResult, unknown>,
  args: Args,
  options: PerformJobOptions = {},
): Promise<PerformedJob> {
  rejectUnknownKeys(options, OPTION_KEYS, "performJob option");
  const parts = (job as unknown as { [JOB_PARTS]?: JobParts })[JOB_PARTS];
  if (parts === undefined) throw new ConfigurationError("performJob() takes a job returned by defineJob or declareJob");
  if (parts.handler === null) throw new JobNotImplementedError(job.name, []);
  const handler = parts.handler;
  const jobId =
    options.jobId === undefined ? randomInt(1, 2 ** 31) : positiveInteger(options.jobId, "performJob option jobId");
  const attempt = positiveInteger(options.attempt ?? 1, "performJob option attempt");
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new ConfigurationError("performJob option signal must be an AbortSignal");
  const stored = serializeArguments(job.name, args);
  const row: ClaimedJob = {
    id: jobId,
    queue_name: checkQueueName(options.queue ?? job.options.queue, "performJob option queue"),
    class_name: job.name,
    arguments: stored,
    priority: checkPriority(options.priority ?? job.options.priority, "performJob option priority"),
    attempts: attempt - 1,
    concurrency_key: null,
    semaphore_id: null,
    job_key: null,
    trace_context: null,
    scheduled_at: null,
    created_at: new Date(),
    has_dependents: 0,
    batch_id: null,
  } as ClaimedJob;
  const decoded = deserializeArguments(stored);
  const { schema } = job.options;
  const input = schema === null ? decoded : await validateArguments(job.name, schema, decoded, "run", jobId);
  const progress: unknown[] = [];
  const report = (value: unknown) => {
    progress.push(deserializeArguments(encodeProgress(job.name, jobId, value)));
  };
  const signal = options.signal ?? new AbortController().signal;
  const dependencies = [...(options.dependencyResults ?? [])];
  const context = jobContext(
    row,
    options.logger ?? parts.logger,
    report,
    () => signal,
    async () => dependencies,
  );
  let result: unknown;
  if (parts.middleware.length === 0) result = await handler(input, context);
  else
    await runThroughMiddleware(parts.middleware, { ...context, args: input }, async () => {
      result = await handler(input, context);
      return result;
    });
  const encoded = encodeResult(job.name, jobId, result);
  return { result: encoded === null ? undefined : deserializeArguments(encoded), progress };
}
