import { expect, it } from "vitest";
import { holdClaimRow } from "./support/claim-row-hold.js";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";

/*
 * Jobs whose handler has ended and whose outcome waits to be written do not use up the room a
 * worker claims into (slots plus prefetch): it claims and runs the next jobs while the write is
 * held up, up to as many again waiting for their write. Before, the waiting outcomes counted
 * against the same bound, so a worker with a backlog claimed only after each finish write.
 *
 * PostgreSQL and MariaDB: there a row lock holds up one job's write and nothing else. (On SQLite
 * holding any write holds the claim up too: one write lock for the whole database.) On MariaDB
 * this also holds the claim to reading only its own claims: a claim that deleted its ready rows
 * through a join on every claim of the process waited for the held lock.
 */
describeEachDatabase(
  "worker: claims more while finished jobs wait for their write",
  (env) => {
    it("claims and runs the next jobs while earlier outcomes' writes are held up, within twice the bound", async () => {
      const firm = env.firm();
      const db = await env.db();
      const started: number[] = [];
      let letFirstEnd!: () => void;
      const firstMayEnd = new Promise<void>((resolve) => (letFirstEnd = resolve));
      const job = firm.defineJob("held", async (args: { n: number }) => {
        started.push(args.n);
        if (args.n === 0) await firstMayEnd;
      });
      const ids = (await job.enqueueAll(Array.from({ length: 12 }, (_, n) => ({ n })))).map((result) =>
        Number(result.id),
      );
      // One slot, two buffered: at most 3 claims not yet ended, and 3 more waiting for their write.
      const supervisor = await firm.start({
        workers: [{ concurrency: 1, prefetch: 2, pollingInterval: 10 }],
        dispatchers: [],
      });
      const holder = await env.firm().database();
      let release: (() => Promise<void>) | undefined;
      try {
        await waitFor(() => started.length === 1, 20_000, "the first job to start");
        // Hold the first job's claim row so its outcome, and those batched after it, cannot be written.
        release = await holdClaimRow(holder, ids[0]!);
        letFirstEnd();
        // Jobs 1 and 2 (buffered) end at once and wait too; counted against the same bound as
        // unended ones, they would stop the worker at 3 jobs until the write goes through.
        await waitFor(() => started.length >= 6, 10_000, "jobs past the first claim to start while the write is held");
        await waitFor(
          async () => (await countRows(db, "firm_queue_claimed_executions")) === 6,
          10_000,
          "six claims held",
        );
        expect(started.length).toBe(6);
      } finally {
        letFirstEnd();
        await release?.();
      }
      await waitFor(() => started.length === 12, 20_000, "every job to run");
      await waitFor(
        async () => (await countRows(db, "firm_queue_claimed_executions")) === 0,
        20_000,
        "every outcome written",
      );
      await supervisor.stop();
      expect(started).toEqual(Array.from({ length: 12 }, (_, n) => n));
      const rows = await db.selectFrom("firm_queue_jobs").select(["finished_at"]).execute();
      expect(rows.every((row) => row.finished_at !== null)).toBe(true);
    });
  },
  ["postgres", "mysql"],
);
