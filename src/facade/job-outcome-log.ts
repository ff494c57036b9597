import type { JobEvents } from "../job-events.js";
import type { Logger } from "../logger.js";

/**
 * The `logJobOutcomes` option: one info line per finished job, with its run time and how long it
 * waited in its queue. Failed attempts, retries and discards need no listener: the worker always
 * logs them (warn or error). A listener, so it costs nothing when the option is off.
 */
export function logJobOutcomes(events: JobEvents, logger: Logger): void {
  events.on("job.finished", (event) =>
    logger.info("job finished", {
      jobId: event.jobId,
      job: event.job,
      queue: event.queue,
      attempt: event.attempt,
      processId: event.processId,
      durationMs: event.durationMs,
      waitMs: Math.max(0, event.startedAt.getTime() - event.dueAt.getTime()),
    }),
  );
}
