import type { ClaimedJob } from "../database/claimed-job.js";

/**
 * Writes a batch of finished jobs and marks the claims of `startedIds` started, in one statement
 * or transaction (with no jobs, the marks alone); returns the ids it recorded finished (the others
 * had lost their claim).
 */
export type RecordFinished = (jobs: readonly ClaimedJob[], startedIds: readonly number[]) => Promise<Set<number>>;

/**
 * Tells the batcher's owner that start marks could not be written (they go with the next batch);
 * once per run of failing batches.
 */
export type MarksFailed = (jobIds: readonly number[], error: unknown) => void;

interface Waiting {
  readonly job: ClaimedJob;
  readonly resolve: (recorded: boolean) => void;
  readonly reject: (error: unknown) => void;
}

const NO_MARKS = { taken: [], marks: [] } as const;

/** Most jobs written in one transaction. */
const MAX_BATCH = 500;

/**
 * Records finished jobs in batches, group-commit style. A job that finishes while no batch is
 * being written starts a batch at the end of the current turn of the event loop (`setImmediate`),
 * so every job that ends in the same turn goes with it; jobs that finish while a batch is being
 * written wait for it and then go together in the next one, which starts at the end of a later
 * turn. So a trickle of jobs costs no measurable latency and a busy worker writes many finished
 * jobs per transaction, even where the database call itself is synchronous (SQLite), while
 * timers and I/O still run between two batches. No timer is involved.
 *
 * The same batches carry the start marks of jobs that left the worker's buffer ({@link started}):
 * such a job starts when an earlier one's handler ends, in the turn that queues that job's finish,
 * so on a busy worker its mark rides in a commit that happens anyway. A turn with marks and no
 * finish (the slot was freed by a failure, which is written on its own) writes the marks alone.
 * Nobody waits for a mark: a crash before it commits puts its job back in line with no attempt
 * counted (docs/reliability.md). A batch that fails keeps its marks for the next one.
 */
export class FinishBatcher {
  private waiting: Waiting[] = [];
  /** Started jobs whose marks are not written yet. */
  private marks = new Set<number>();
  /**
   * Marks came since the last batch was taken. Marks kept from a failed batch do not start a write
   * of their own (a loop of failing writes would follow): they go with the next finish or start.
   */
  private newMarks = false;
  /** The last batch with marks failed: {@link marksFailed} was told, and is not told again until one succeeds. */
  private marksFailing = false;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly record: RecordFinished,
    private readonly marksFailed: MarksFailed = () => undefined,
  ) {}

  /** Record `job` as finished; resolves to false when its claim had been taken away. */
  finish(job: ClaimedJob): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, resolve, reject });
      this.schedule();
    });
  }

  /** Mark the claim on `jobId` started with the next batch; nothing waits for it. */
  started(jobId: number): void {
    this.marks.add(jobId);
    this.newMarks = true;
    this.schedule();
  }

  /**
   * The marks to write with `batch`, taken from those waiting (`taken`, given back if the batch
   * fails). A claim the batch removes is not marked: in one PostgreSQL statement, two changes to
   * one row are not both made. A claim whose job has finished and waits for a later batch (more
   * ended in a turn than one batch holds) is not marked either: its mark stays, and that batch
   * removes the claim. Writing it would change a row about to go (on SQLite, draining a backlog,
   * that was half the rows of every mark statement).
   */
  private takeMarks(batch: readonly Waiting[]): { taken: number[]; marks: number[] } {
    const finishing = new Set(batch.map((entry) => Number(entry.job.id)));
    const later = new Set(this.waiting.map((entry) => Number(entry.job.id)));
    const taken: number[] = [];
    const marks: number[] = [];
    for (const id of this.marks) {
      if (later.has(id)) continue;
      this.marks.delete(id);
      taken.push(id);
      if (!finishing.has(id)) marks.push(id);
    }
    return { taken, marks };
  }

  private schedule(): void {
    this.writing ??= new Promise<void>((turnEnded) => setImmediate(turnEnded)).then(() => this.writeBatch());
  }

  /** Write one batch, then schedule the next if jobs finished or started meanwhile. */
  private async writeBatch(): Promise<void> {
    try {
      const batch = this.waiting.splice(0, MAX_BATCH);
      const { taken, marks } = this.marks.size === 0 ? NO_MARKS : this.takeMarks(batch);
      this.newMarks = false;
      if (batch.length === 0 && marks.length === 0) return;
      try {
        const recorded = await this.record(
          batch.map((entry) => entry.job),
          marks,
        );
        if (marks.length > 0) this.marksFailing = false;
        for (const entry of batch) entry.resolve(recorded.has(Number(entry.job.id)));
      } catch (error) {
        for (const id of taken) this.marks.add(id);
        if (marks.length > 0 && !this.marksFailing) this.marksFailed(marks, error);
        if (marks.length > 0) this.marksFailing = true;
        for (const entry of batch) entry.reject(error);
      }
    } finally {
      this.writing = undefined;
      // The next batch starts in a later turn, never straight from this one's answer: where the
      // database call is synchronous (SQLite), each answer starts buffered jobs whose ends join
      // the next batch at once, and a loop over batches would run a whole backlog in one turn,
      // starving timers (heartbeats), signals and I/O until it was empty.
      if (this.waiting.length > 0 || this.newMarks) this.schedule();
    }
  }
}
