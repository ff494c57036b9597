import type { ClaimedJob } from "../database/claimed-job.js";

/** Most jobs a worker holds claimed ahead by default, whatever its concurrency. */
const MAX_DEFAULT_PREFETCH = 500;

/**
 * How many jobs a worker claims ahead unless told otherwise: twenty per concurrency slot, at most
 * {@link MAX_DEFAULT_PREFETCH}. With durable commits each claim and each finish batch waits for a
 * flush; a deep buffer keeps the slots busy meanwhile (on durable PostgreSQL, 500 processed about
 * 1.5× as fast as 96 at concurrency 24, bench/results/history.md). A backlog is still shared by several
 * workers in chunks of that size.
 */
export function defaultPrefetch(concurrency: number): number {
  return Math.min(MAX_DEFAULT_PREFETCH, concurrency * 20);
}

/**
 * The jobs a worker has claimed but not started, in claim order, never more than `bound`. They
 * hold real claims in the database (the stale-worker guard applies to them as to running jobs);
 * holding them here lets one claim transaction serve many jobs when there is a backlog.
 */
export class ClaimBuffer {
  private jobs: ClaimedJob[] = [];
  private head = 0;

  constructor(readonly bound: number) {}

  /** Jobs held. */
  get size(): number {
    return this.jobs.length - this.head;
  }

  /** How many more jobs may be added. */
  get room(): number {
    return this.bound - this.size;
  }

  /** Half or less of the bound is held: time to claim more (never, when the bound is 0). */
  get isLow(): boolean {
    return this.bound > 0 && this.size * 2 <= this.bound;
  }

  /** Hold `jobs` after those already held (the caller claims no more than {@link room}). */
  add(jobs: readonly ClaimedJob[]): void {
    if (this.head > 0) {
      this.jobs = this.jobs.slice(this.head);
      this.head = 0;
    }
    for (const job of jobs) this.jobs.push(job);
  }

  /** The oldest job held, removed; undefined when empty. */
  take(): ClaimedJob | undefined {
    if (this.head >= this.jobs.length) return undefined;
    const job = this.jobs[this.head]!;
    this.jobs[this.head++] = undefined as unknown as ClaimedJob;
    return job;
  }

  /** Whether job `jobId` is held. */
  has(jobId: number): boolean {
    for (let i = this.head; i < this.jobs.length; i++) if (Number(this.jobs[i]!.id) === jobId) return true;
    return false;
  }

  /** Remove job `jobId` (a cancelled one); returns it, or undefined when it was not held. */
  remove(jobId: number): ClaimedJob | undefined {
    const index = this.jobs.findIndex((job, at) => at >= this.head && job !== undefined && Number(job.id) === jobId);
    if (index < 0) return undefined;
    return this.jobs.splice(index, 1)[0];
  }

  /** Remove and return every job held. */
  drain(): ClaimedJob[] {
    const held = this.jobs.slice(this.head);
    this.jobs = [];
    this.head = 0;
    return held;
  }
}
