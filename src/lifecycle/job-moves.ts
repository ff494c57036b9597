import type { JobEventMap, JobEventName, JobEvents } from "../job-events.js";

/** A job a transaction blocked or unblocked. */
type MovedJob = JobEventMap["job.blocked"];
/** A job a transaction put to wait for its rate-limit budget. */
type ThrottledJob = JobEventMap["job.rateLimited"];

/** The events a {@link JobMoves} collects: what a transaction did that is told after its commit. */
const COLLECTED = [
  "job.blocked",
  "job.unblocked",
  "job.rateLimited",
  "job.pending",
  "job.dependenciesMet",
  "job.dependencyCancelled",
  "batch.ended",
] as const satisfies readonly JobEventName[];

type Collected = (typeof COLLECTED)[number];

/** One noted event, in the order the transaction did it. */
type Noted = { [Name in Collected]: readonly [Name, JobEventMap[Name]] }[Collected];

/**
 * What one transaction did that listeners hear of only once it has committed: jobs blocked (no
 * free slot of their concurrency key), unblocked (took a freed slot), put to wait for a rate-limit
 * budget, written pending on their dependencies, released by their last dependency's end, or
 * cancelled because a dependency failed or was cancelled; and batches that ended. Pass one in the
 * {@link DispatchContext} of the transaction; call {@link reset} at the top of the transaction's
 * work, since a transaction may be run again. Events nobody listens to are not kept.
 */
export class JobMoves {
  private noted: Noted[] = [];

  private constructor(private readonly wanted: ReadonlySet<Collected>) {}

  /** A collector, or undefined (nothing to collect) when no one listens. */
  static for(events: JobEvents): JobMoves | undefined {
    const wanted = COLLECTED.filter((name) => events.has(name));
    return wanted.length > 0 ? new JobMoves(new Set(wanted)) : undefined;
  }

  /** Forget what a previous run of the transaction collected. */
  reset(): void {
    this.noted = [];
  }

  /** Whether anyone listens to `name`: check before working out a payload that costs a read. */
  wants(name: Collected): boolean {
    return this.wanted.has(name);
  }

  noteBlocked(job: MovedJob): void {
    this.note("job.blocked", job);
  }

  noteUnblocked(job: MovedJob): void {
    this.note("job.unblocked", job);
  }

  noteRateLimited(job: ThrottledJob): void {
    this.note("job.rateLimited", job);
  }

  notePending(job: JobEventMap["job.pending"]): void {
    this.note("job.pending", job);
  }

  noteDependenciesMet(job: JobEventMap["job.dependenciesMet"]): void {
    this.note("job.dependenciesMet", job);
  }

  noteDependencyCancelled(job: JobEventMap["job.dependencyCancelled"]): void {
    this.note("job.dependencyCancelled", job);
  }

  noteBatchEnded(batch: JobEventMap["batch.ended"]): void {
    this.note("batch.ended", batch);
  }

  /** Tell the listeners, after the commit, in the order the transaction did things. */
  emit(events: JobEvents): void {
    const noted = this.noted;
    this.reset();
    for (const [name, event] of noted) events.emit(name, event as never);
  }

  private note<Name extends Collected>(name: Name, event: JobEventMap[Name]): void {
    if (this.wanted.has(name)) this.noted.push([name, event] as unknown as Noted);
  }
}
