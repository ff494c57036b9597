import { expect, it } from "vitest";
import { dispatchScheduledBatch } from "../src/roles/dispatcher.js";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";

describeEachDatabase("scheduled jobs", (env) => {
  it("stay scheduled until due, then dispatch() makes them ready", async () => {
    const firm = env.firm();
    const ran: number[] = [];
    const job = firm.defineJob("soon", async (args: { n: number }) => void ran.push(args.n));
    const id = (await job.enqueue({ n: 1 }, { wait: 150 })).id;
    expect(await firm.dispatch()).toBe(0);
    expect(await firm.drain()).toBe(0);
    expect((await firm.getJob(id))?.state).toBe("scheduled");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await firm.dispatch()).toBe(1);
    expect((await firm.getJob(id))?.state).toBe("ready");
    expect(await firm.drain()).toBe(1);
    expect(ran).toEqual([1]);
  });

  it("promote in batches, in priority order within the same due time", async () => {
    const firm = env.firm();
    const job = firm.defineJob("batch", async () => {});
    const at = new Date(Date.now() + 150);
    const low = (await job.enqueueAll([{}, {}, {}], { at, priority: 5 })).map((result) => result.id);
    const high = (await job.enqueueAll([{}, {}], { at, priority: 1 })).map((result) => result.id);
    await job.enqueue({}, { wait: "1h" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const database = await firm.database();
    expect(await dispatchScheduledBatch(database, (firm as any).policies, 2)).toBe(2);
    // The two priority-1 jobs went first.
    for (const id of high) expect((await firm.getJob(id))?.state).toBe("ready");
    for (const id of low) expect((await firm.getJob(id))?.state).toBe("scheduled");
    expect(await firm.dispatch({ batchSize: 2 })).toBe(3);
    expect(await countRows(database.db, "firm_queue_scheduled_executions")).toBe(1);
  });

  it("the running dispatcher promotes them without help", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    const job = firm.defineJob("timed", async (args: { tag: string }) => void ran.push(args.tag));
    await job.enqueue({ tag: "later" }, { wait: 300 });
    await job.enqueue({ tag: "now" });
    const supervisor = await firm.start({ workers: [{ pollingInterval: 20 }], dispatchers: [{ pollingInterval: 50 }] });
    try {
      await waitFor(() => ran.length === 2, 5000, "both jobs");
      expect(ran).toEqual(["now", "later"]);
    } finally {
      await supervisor.stop();
    }
  });
});
