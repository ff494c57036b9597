import type { ClaimedJob } from "../database/claimed-job.js";

/** Writes a batch of finished jobs; returns the ids it recorded (the others had lost their claim). */
export type RecordFinished = (jobs: readonly ClaimedJob[]) => Promise<Set<number>>;

interface Waiting {
  readonly job: ClaimedJob;
  readonly resolve: (recorded: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/** Most jobs written in one transaction. */
const MAX_BATCH = 500;

/**
 * Records finished jobs in batches, group-commit style. A job that finishes while no batch is
 * being written starts a batch at the end of the current turn of the event loop (`setImmediate`),
 * so every job that ends in the same turn goes with it; jobs that finish while a batch is being
 * written wait for it and then go together in the next one. So a trickle of jobs costs no
 * measurable latency and a busy worker writes many finished jobs per transaction, even where the
 * database call itself is synchronous (SQLite). No timer is involved.
 */
export class FinishBatcher {
  private waiting: Waiting[] = [];
  private writing: Promise<void> | undefined;

  constructor(private readonly record: RecordFinished) {}

  /** Record `job` as finished; resolves to false when its claim had been taken away. */
  finish(job: ClaimedJob): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, resolve, reject });
      this.writing ??= new Promise<void>((turnEnded) => setImmediate(turnEnded)).then(() => this.writeAll());
    });
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        try {
          const recorded = await this.record(batch.map((entry) => entry.job));
          for (const entry of batch) entry.resolve(recorded.has(Number(entry.job.id)));
        } catch (error) {
          for (const entry of batch) entry.reject(error);
        }
      }
    } finally {
      this.writing = undefined;
    }
  }
}
