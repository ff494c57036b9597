import { expect, it } from "vitest";
import { holdClaimRow } from "./support/claim-row-hold.js";
import { describeEachDatabase, waitFor } from "./support/harness.js";

/*
 * A slot frees up when a handler ends, not when its outcome is written: the next buffered job
 * starts while the finished one waits for its write, so a slow write does not idle the worker and
 * one finish batch can carry more jobs than there are slots.
 */
describeEachDatabase("worker: slots free up before the outcome is written", (env) => {
  it("starts the next buffered job while the previous job's outcome write is held up", async () => {
    const firm = env.firm();
    const started: number[] = [];
    let letFirstEnd!: () => void;
    const firstMayEnd = new Promise<void>((resolve) => (letFirstEnd = resolve));
    const job = firm.defineJob("overlap", async (args: { n: number }) => {
      started.push(args.n);
      if (args.n === 0) await firstMayEnd;
    });
    const ids = (await job.enqueueAll([{ n: 0 }, { n: 1 }, { n: 2 }])).map((result) => result.id);
    const supervisor = await firm.start({
      workers: [{ concurrency: 1, prefetch: 3, pollingInterval: 10 }],
      dispatchers: [],
    });
    const holder = await env.firm().database();
    let release: (() => Promise<void>) | undefined;
    try {
      await waitFor(() => started.length === 1, 20_000, "the first job to start");
      // Hold the first job's claim row (SQLite: the write lock) so its outcome cannot be written.
      release = await holdClaimRow(holder, ids[0]!);
      if (env.dialect === "sqlite") {
        // SQLite's lock is the whole database: the next jobs' start marks (written before their
        // handlers run, and waited for synchronously by the driver) would wait for it too, so the
        // overlap cannot be shown there; the write is let through and the jobs must still all run.
        await release();
        release = undefined;
      }
      letFirstEnd();
      // With one slot, the other two jobs run only if the first one's slot freed before its write.
      await waitFor(() => started.length === 3, 4_000, "the buffered jobs to start while the write waits");
      expect(started).toEqual([0, 1, 2]);
    } finally {
      letFirstEnd();
      await release?.();
      await waitFor(
        async () =>
          (await (await env.db()).selectFrom("firm_queue_claimed_executions").select("job_id").execute()).length === 0,
        20_000,
        "every outcome written",
      );
      await supervisor.stop();
    }
    const rows = await (await env.db()).selectFrom("firm_queue_jobs").select(["finished_at"]).execute();
    expect(rows.every((row) => row.finished_at !== null)).toBe(true);
  });
});
