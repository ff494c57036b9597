import type { JobEventMap, JobEvents } from "../job-events.js";

/** A job a transaction blocked or unblocked. */
type MovedJob = JobEventMap["job.blocked"];

/**
 * The jobs one transaction blocked (no free slot of their concurrency key) and unblocked (took a
 * freed slot), collected while it runs and told to the `job.blocked` / `job.unblocked`
 * listeners only once it has committed. Pass one in the {@link DispatchContext} of the
 * transaction; call {@link reset} at the top of the transaction's work, since a transaction
 * may be run again.
 */
export class JobMoves {
  private blocked: MovedJob[] = [];
  private unblocked: MovedJob[] = [];

  private constructor() {}

  /** A collector, or undefined (nothing to collect) when no one listens. */
  static for(events: JobEvents): JobMoves | undefined {
    return events.has("job.blocked") || events.has("job.unblocked") ? new JobMoves() : undefined;
  }

  /** Forget what a previous run of the transaction collected. */
  reset(): void {
    this.blocked = [];
    this.unblocked = [];
  }

  noteBlocked(job: MovedJob): void {
    this.blocked.push(job);
  }

  noteUnblocked(job: MovedJob): void {
    this.unblocked.push(job);
  }

  /** Tell the listeners, after the commit. */
  emit(events: JobEvents): void {
    for (const job of this.blocked) events.emit("job.blocked", job);
    for (const job of this.unblocked) events.emit("job.unblocked", job);
    this.reset();
  }
}
