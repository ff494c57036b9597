import type { JobAttemptEvent, JobEvents } from "../job-events.js";
import type { FailedAttemptOutcome } from "../lifecycle/failed-attempt.js";
import type { JobRow } from "../models/job.js";

/** The fields of a job event about the attempt `processId` is about to make of a claimed job. */
export function attemptOf(job: JobRow, processId: number): JobAttemptEvent {
  return { jobId: Number(job.id), job: job.class_name, queue: job.queue_name, attempt: job.attempts + 1, processId };
}

/**
 * Tell listeners what a recorded failed attempt led to: `job.retrying`, `job.failed` or
 * `job.discarded`, per the retry policy's decision.
 */
export function emitFailure(
  events: JobEvents,
  { decision, maxAttempts, retryAt }: FailedAttemptOutcome,
  attempt: JobAttemptEvent & { readonly error: unknown; readonly durationMs: number },
): void {
  switch (decision.action) {
    case "retry":
      if (events.has("job.retrying"))
        events.emit("job.retrying", { ...attempt, maxAttempts, delayMs: decision.delayMs, retryAt: retryAt! });
      return;
    case "discard":
      if (events.has("job.discarded")) events.emit("job.discarded", { ...attempt, reason: "discardOn" });
      return;
    case "fail":
      if (events.has("job.failed")) events.emit("job.failed", { ...attempt, maxAttempts, reason: decision.reason });
      return;
  }
}
