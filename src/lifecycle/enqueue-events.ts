import type { JobEvents } from "../job-events.js";
import type { NewJob } from "../models/job.js";

/**
 * Tell listeners of the jobs written (`job.enqueued`) and of those dropped on a concurrency
 * conflict (`job.discarded`): `ids` is what enqueue returns (null where dropped), `written` the
 * ids the jobs were inserted with.
 */
export function emitEnqueued(
  events: JobEvents,
  jobs: readonly NewJob[],
  ids: readonly (number | null)[],
  written: readonly number[],
): void {
  const enqueued = events.has("job.enqueued");
  const discarded = events.has("job.discarded");
  if (!enqueued && !discarded) return;
  jobs.forEach(({ className: job, queueName: queue, priority, scheduledAt }, index) => {
    const jobId = ids[index];
    if (jobId !== null && jobId !== undefined) {
      if (enqueued) events.emit("job.enqueued", { jobId, job, queue, priority, scheduledAt });
    } else if (discarded && written[index] !== undefined) {
      events.emit("job.discarded", { jobId: written[index], job, queue, reason: "concurrency" });
    }
  });
}
