import type { JobEvents } from "../job-events.js";
import type { JobCounter, MetricSamples } from "../metric-samples.js";

/**
 * Count job events into `samples`: the counters by outcome (and batches by how they ended), the run time of every attempt that
 * ended with a known duration, and the queue wait of every attempt that started. Listeners only
 * add numbers, so they cost the job next to nothing. Returns the function that stops counting.
 */
export function countJobEvents(events: JobEvents, samples: MetricSamples): () => void {
  /**
   * An attempt that ended after `durationMs`: counted under `counter`, its run time observed,
   * unless crash recovery ended it (`recovered`: nobody saw how long it ran).
   */
  const attemptEnded =
    (counter: JobCounter) =>
    (event: {
      readonly queue: string;
      readonly job: string;
      readonly durationMs: number;
      readonly recovered?: boolean;
    }) => {
      samples.count(counter, event.queue, event.job);
      if (event.recovered !== true) samples.observe("runTime", event.queue, event.job, event.durationMs / 1000);
    };
  const stops = [
    events.on("job.enqueued", (event) => samples.count("enqueued", event.queue, event.job)),
    events.on("job.started", (event) =>
      samples.observe("queueWait", event.queue, event.job, (event.startedAt.getTime() - event.dueAt.getTime()) / 1000),
    ),
    events.on("job.finished", attemptEnded("finished")),
    events.on("job.retrying", attemptEnded("retried")),
    events.on("job.failed", attemptEnded("failed")),
    events.on("job.abandoned", attemptEnded("abandoned")),
    events.on("job.dropped", (event) => samples.count("dropped", event.queue, event.job)),
    events.on("job.cancelled", (event) => samples.count("cancelled", event.queue, event.job)),
    events.on("job.rateLimited", (event) => samples.count("rateLimited", event.queue, event.job)),
    events.on("job.pending", (event) => samples.count("pending", event.queue, event.job)),
    events.on("job.dependenciesMet", (event) => samples.count("dependenciesMet", event.queue, event.job)),
    events.on("job.dependencyCancelled", (event) => samples.count("dependencyCancelled", event.queue, event.job)),
    events.on("batch.ended", (event) => samples.countBatchEnded(event.state)),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}
