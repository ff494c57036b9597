import type { JobEvents, JobFailureEvent } from "../job-events.js";
import type { FailedAttemptOutcome } from "./failed-attempt.js";

/**
 * Tell listeners what a recorded failed attempt led to: `job.retrying`, `job.failed` or
 * `job.abandoned`, per the retry policy's decision.
 */
export function emitFailure(
  events: JobEvents,
  { decision, maxAttempts, retryAt }: FailedAttemptOutcome,
  attempt: Omit<JobFailureEvent, "maxAttempts">,
): void {
  switch (decision.action) {
    case "retry":
      if (events.has("job.retrying"))
        events.emit("job.retrying", { ...attempt, maxAttempts, delayMs: decision.delayMs, retryAt: retryAt! });
      return;
    case "abandon":
      if (events.has("job.abandoned")) events.emit("job.abandoned", attempt);
      return;
    case "fail":
      if (events.has("job.failed")) events.emit("job.failed", { ...attempt, maxAttempts, reason: decision.reason });
      return;
  }
}
