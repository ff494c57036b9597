import type { JobEventMap, JobEvents } from "../job-events.js";

/** A job a transaction blocked or unblocked. */
type MovedJob = JobEventMap["job.blocked"];
/** A job a transaction put to wait for its rate-limit budget. */
type ThrottledJob = JobEventMap["job.rateLimited"];

/**
 * The jobs one transaction blocked (no free slot of their concurrency key), unblocked (took a
 * freed slot) and put to wait for a rate-limit budget, collected while it runs and told to the
 * `job.blocked` / `job.unblocked` / `job.rateLimited` listeners only once it has committed. Pass one in the {@link DispatchContext} of the
 * transaction; call {@link reset} at the top of the transaction's work, since a transaction
 * may be run again.
 */
export class JobMoves {
  private blocked: MovedJob[] = [];
  private unblocked: MovedJob[] = [];
  private rateLimited: ThrottledJob[] = [];

  private constructor() {}

  /** A collector, or undefined (nothing to collect) when no one listens. */
  static for(events: JobEvents): JobMoves | undefined {
    return events.has("job.blocked") || events.has("job.unblocked") || events.has("job.rateLimited")
      ? new JobMoves()
      : undefined;
  }

  /** Forget what a previous run of the transaction collected. */
  reset(): void {
    this.blocked = [];
    this.unblocked = [];
    this.rateLimited = [];
  }

  noteBlocked(job: MovedJob): void {
    this.blocked.push(job);
  }

  noteUnblocked(job: MovedJob): void {
    this.unblocked.push(job);
  }

  noteRateLimited(job: ThrottledJob): void {
    this.rateLimited.push(job);
  }

  /** Tell the listeners, after the commit. */
  emit(events: JobEvents): void {
    for (const job of this.blocked) events.emit("job.blocked", job);
    for (const job of this.unblocked) events.emit("job.unblocked", job);
    for (const job of this.rateLimited) events.emit("job.rateLimited", job);
    this.reset();
  }
}
