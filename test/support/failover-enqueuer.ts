import { setTimeout as sleep } from "node:timers/promises";
import { FirmQueue, silentLogger } from "../../src/index.js";
import { defineChaosJobs } from "../fixtures/chaos-jobs.js";
import type { Random } from "./chaos-settings.js";
import { planJobs } from "./chaos-workload.js";

/**
 * An application enqueueing through a failover: small batches, one after the other, on one
 * FirmQueue kept open across it (the URL lists both servers). A batch that fails was not
 * acknowledged and is not counted; the ids of every acknowledged job are kept, so the test can
 * ask the new primary for each of them.
 */
export class FailoverEnqueuer {
  readonly acknowledged: number[] = [];
  /** When the latest batch was acknowledged (ms since the epoch). */
  lastAcknowledgedAt = 0;
  /** Enqueues that failed (not acknowledged: the application would retry them). */
  failedEnqueues = 0;
  private running = true;
  private readonly loop: Promise<void>;
  private readonly firm: FirmQueue;

  constructor(url: string, random: Random) {
    this.firm = new FirmQueue({ databaseUrl: url, logger: silentLogger });
    defineChaosJobs(this.firm, async () => {});
    this.loop = this.run(random);
  }

  private async run(random: Random): Promise<void> {
    while (this.running) {
      const batch = planJobs(random, 3);
      const results = await Promise.allSettled(batch.map((job) => this.firm.enqueue(job.name, job.args, job.options)));
      for (const result of results) {
        if (result.status === "rejected") this.failedEnqueues++;
        else if (result.value.id !== null) {
          this.acknowledged.push(result.value.id);
          this.lastAcknowledgedAt = Date.now();
        }
      }
      await sleep(40);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.firm.close();
  }
}
