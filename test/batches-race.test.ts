import { expect, it } from "vitest";
import type { BatchResult } from "../src/index.js";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";
import { RaceWorkers } from "./support/race-workers.js";

/** Races run: 200 by default (10 rounds of 20 batches); FIRM_QUEUE_BATCH_RACES for a longer run. */
const RACES = Number(process.env.FIRM_QUEUE_BATCH_RACES ?? "200");
const PER_ROUND = 20;

describeEachDatabase("batches across worker processes", (env) => {
  it(`two processes end the last two jobs of a batch at once, ${RACES} times: its callback runs once each time`, {
    timeout: 300_000,
  }, async () => {
    const firm = env.firm();
    // The worker processes run "dependency" jobs (queues a and b): each holds its jobs until "go".
    firm.defineJob("dependency", async () => {});
    const runs = new Map<number, number>();
    firm.defineJob("notify", async (args: { round: number; n: number }) => {
      const key = args.round * PER_ROUND + args.n;
      runs.set(key, (runs.get(key) ?? 0) + 1);
    });
    const workers = new RaceWorkers(env.url, PER_ROUND);
    try {
      await workers.whenReady();
      const db = await env.db();
      for (let round = 0; round < RACES / PER_ROUND; round++) {
        const batches: BatchResult[] = [];
        for (let n = 0; n < PER_ROUND; n++)
          batches.push(
            await firm.batch(
              [
                { name: "dependency", args: { n }, options: { queue: "a" } },
                { name: "dependency", args: { n }, options: { queue: "b" } },
              ],
              {
                onFinish: { name: "notify", args: { round, n } },
                onSuccess: { name: "notify", args: { round, n: n + 1000 } },
              },
            ),
          );
        const ids = batches.flatMap((batch) => batch.jobs.map((job) => job.id!));
        await workers.whenStarted(ids, "every job of the batches running");
        workers.release();
        await waitFor(
          async () =>
            (await Promise.all(batches.map((batch) => firm.getBatch(batch.id)))).every((b) => b?.pending === 0),
          30_000,
          "every batch ended",
        );
        for (const batch of batches)
          expect(await firm.getBatch(batch.id)).toMatchObject({ state: "finished", total: 2, finished: 2, pending: 0 });
        // Exactly one onFinish and one onSuccess per batch were written, and nothing else.
        expect(await countRows(db, "firm_queue_ready_executions")).toBe(2 * PER_ROUND);
        expect(await firm.drain({ queues: "default", concurrency: PER_ROUND })).toBe(2 * PER_ROUND);
      }
      expect(runs.size).toBe(2 * RACES);
      expect([...runs.values()].every((count) => count === 1)).toBe(true);
    } finally {
      await workers.stop();
    }
  });
});
