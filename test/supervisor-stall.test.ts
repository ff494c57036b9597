import { expect, it } from "vitest";
import { describeEachDatabase, enqueued, waitFor } from "./support/harness.js";

describeEachDatabase("an event-loop stall in an async supervisor", (env) => {
  it("does not make the supervisor prune its own processes", async () => {
    const firm = env.firm();
    let runs = 0;
    firm.defineJob("busy", () => {
      runs++;
      // CPU-bound: nothing else on this event loop runs meanwhile, heartbeats included.
      const until = Date.now() + 1500;
      while (Date.now() < until);
    });
    const supervisor = await firm.start({
      workers: [{ queues: "*", pollingInterval: 50 }],
      processHeartbeatInterval: 200,
      processAliveThreshold: 1000,
    });
    try {
      const db = await env.db();
      const rows = async () =>
        (await db.selectFrom("firm_queue_processes").select("id").orderBy("id").execute()).map((row) => Number(row.id));
      const before = await rows();
      expect(before).toHaveLength(3);
      const id = await enqueued(firm.enqueue("busy", null));
      await waitFor(async () => (await firm.getJob(id))?.state === "finished", 15_000, "the job to finish");
      // A few more pruning passes after the stall.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await rows()).toEqual(before);
      expect(runs).toBe(1);
    } finally {
      await supervisor.stop();
    }
  });
});
