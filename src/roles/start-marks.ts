import type { Database } from "../database/connection.js";
import type { Logger } from "../logger.js";
import { markClaimsStarted } from "../models/claim-start.js";

/** Most claims marked in one statement. */
const MAX_BATCH = 500;

/**
 * Marks claims as started before their handlers run, so that crash recovery can tell a job that
 * ran (a failed attempt: a job that kills its worker each time still runs out of attempts) from
 * one that only waited in the buffer (back in line, no attempt counted). Grouped like the finish
 * batcher: every job started in one turn of the event loop goes in one UPDATE, and jobs started
 * while it is being written go together in the next one, so a busy worker pays one short
 * statement per group of starts, not per job. A mark that fails (the database is away) does not
 * hold the job up: it runs unmarked, and a crash before its outcome is written would then put it
 * back in line with no attempt counted.
 */
export class StartMarks {
  private waiting: { jobId: number; resolve: () => void }[] = [];
  private writing: Promise<void> | undefined;
  private failing = false;

  constructor(
    private readonly database: Database,
    private readonly processId: number,
    private readonly logger: Logger,
  ) {}

  /** Resolves once the claim on `jobId` is marked started (or its mark has failed). */
  started(jobId: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push({ jobId, resolve });
      this.writing ??= new Promise<void>((turnEnded) => setImmediate(turnEnded)).then(() => this.writeAll());
    });
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        try {
          const ids = batch.map((entry) => entry.jobId);
          await markClaimsStarted(this.database.db, this.processId, ids, this.database.clock.now());
          this.failing = false;
        } catch (error) {
          if (!this.failing)
            this.logger.warn("could not mark claims as started; their jobs run unmarked", {
              processId: this.processId,
              jobIds: batch.map((entry) => entry.jobId),
              error,
            });
          this.failing = true;
        }
        for (const entry of batch) entry.resolve();
      }
    } finally {
      this.writing = undefined;
    }
  }
}
