import type { JobAttemptEvent } from "../job-events.js";
import type { JobRow } from "../models/job.js";

/** The fields of a job event about the attempt `processId` is about to make of a claimed job. */
export function attemptOf(job: JobRow, processId: number): JobAttemptEvent {
  return { jobId: Number(job.id), job: job.class_name, queue: job.queue_name, attempt: job.attempts + 1, processId };
}
