import type { JobAttemptEvent } from "../job-events.js";
import type { ClaimedJob } from "../database/claimed-job.js";

/** The fields of a job event about the attempt `processId` is about to make of a claimed job. */
export function attemptOf(job: ClaimedJob, processId: number): JobAttemptEvent {
  return { jobId: Number(job.id), job: job.class_name, queue: job.queue_name, attempt: job.attempts + 1, processId };
}
