import type { JobEvents } from "../job-events.js";
import type { NewJob } from "../models/job.js";
import type { EnqueueResult } from "./enqueue-result.js";

/**
 * Tell listeners of the jobs created (`job.enqueued`) and of those dropped on a concurrency
 * conflict (`job.dropped`): `results` is what enqueue returns, `written` the ids the jobs were
 * inserted with (a job matched by its unique key is neither: the job it matched is told of
 * when it was created).
 */
export function emitEnqueued(
  events: JobEvents,
  jobs: readonly NewJob[],
  results: readonly EnqueueResult[],
  written: readonly number[],
): void {
  const enqueued = events.has("job.enqueued");
  const dropped = events.has("job.dropped");
  if (!enqueued && !dropped) return;
  jobs.forEach(({ className: job, queueName: queue, priority, scheduledAt }, index) => {
    const result = results[index]!;
    if (result.status === "created") {
      if (enqueued) events.emit("job.enqueued", { jobId: result.id, job, queue, priority, scheduledAt });
    } else if (result.status === "dropped" && dropped && written[index] !== undefined) {
      events.emit("job.dropped", { jobId: written[index], job, queue });
    }
  });
}
