import { toDate } from "../database/schema.js";
import type { JobContext } from "../definitions/job-definition.js";
import type { Logger } from "../logger.js";
import { bindLogger } from "../logger-adapter.js";
import type { ClaimedJob } from "../database/claimed-job.js";

/**
 * The context a handler gets for one attempt of `job`. `enqueuedAt`, `logger` and `signal` are
 * made when first read (and then kept): most handlers read none of them, and building a bound
 * logger, a Date and an AbortSignal for every job was a measurable share of a busy worker's time
 * (docs/benchmarks.md, "Hot path, third pass"). They are the object's own properties, so
 * spreading the context (`{ ...context }`) still copies them.
 */
export function jobContext(
  job: ClaimedJob,
  logger: Logger,
  progress: (value: unknown) => void,
  signal: () => AbortSignal,
): JobContext {
  const jobId = Number(job.id);
  const attempt = job.attempts + 1;
  let enqueuedAt: Date | undefined;
  let bound: Logger | undefined;
  return {
    jobId,
    name: job.class_name,
    queue: job.queue_name,
    priority: job.priority,
    attempt,
    get enqueuedAt() {
      enqueuedAt ??= toDate(job.created_at);
      return enqueuedAt;
    },
    // Every line the handler logs says which job (and which attempt) wrote it.
    get logger() {
      bound ??= bindLogger(logger, { jobId, job: job.class_name, queue: job.queue_name, attempt });
      return bound;
    },
    progress,
    get signal() {
      return signal();
    },
  };
}
