import { expect, it } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import { appHandles } from "./support/app-handles.js";
import { describeEachDatabase, waitFor } from "./support/harness.js";

describeEachDatabase("a database handle the application passes in", (env) => {
  for (const { name, open } of appHandles(env.dialect, () => env.url)) {
    it(`${name}: enqueues, runs jobs, and is left open when firm-queue closes`, async () => {
      const app = open();
      try {
        const firm = new FirmQueue({ database: app.handle, logger: silentLogger });
        const seen: Array<{ n: number; at: string }> = [];
        const job = firm.defineJob<{ n: number; at: string }>("own-handle", async (args) => void seen.push(args));
        expect(await firm.migrate()).toEqual([]);
        const id = (await job.enqueue({ n: 1, at: "now" })).id;
        const later = (await job.enqueue({ n: 2, at: "later" }, { wait: "1h" })).id;
        expect(await firm.drain()).toBe(1);
        const finished = await firm.getJob(id);
        expect(finished?.state).toBe("finished");
        // Ids are numbers whatever the handle's driver does with BIGINT.
        expect(finished?.id).toBe(id);
        expect(typeof id).toBe("number");
        const scheduled = await firm.getJob(later);
        expect(scheduled?.state).toBe("scheduled");
        // Read back through the handle's driver, the time is still an hour ahead (no zone shift).
        expect(Math.abs(scheduled!.scheduledAt!.getTime() - (Date.now() + 3_600_000))).toBeLessThan(120_000);

        const supervisor = await firm.start({ workers: [{ pollingInterval: 50 }], dispatchers: [] });
        try {
          await job.enqueue({ n: 3, at: "while running" });
          await waitFor(() => seen.length === 2, 10_000, "the job to run under a worker");
        } finally {
          await supervisor.stop();
        }
        expect(seen.map((args) => args.n)).toEqual([1, 3]);
        await firm.close();
        await app.stillOpen();
      } finally {
        await app.close();
      }
    });
  }

  it("fork mode needs a URL, since each child opens the database itself", async () => {
    const [first] = appHandles(env.dialect, () => env.url);
    const app = first!.open();
    try {
      const firm = new FirmQueue({ database: app.handle, logger: silentLogger });
      firm.defineJob("forked", async () => undefined);
      await expect(firm.start({ mode: "fork" })).rejects.toThrow(/give a databaseUrl/);
      await firm.close();
    } finally {
      await app.close();
    }
  });
});
