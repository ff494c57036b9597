import { expect, it } from "vitest";
import { describeEachDatabase, enqueued } from "./support/harness.js";

describeEachDatabase("drain heartbeats", (env) => {
  it("a drain running a job longer than the alive threshold is not pruned (the job runs once and finishes)", async () => {
    const firm = env.firm();
    let runs = 0;
    firm.defineJob("long", async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    });
    const id = await enqueued(firm.enqueue("long", null));
    // A supervisor beside the drain that prunes anything silent for more than 600 ms.
    const supervisor = await firm.start({
      workers: [{ queues: "elsewhere" }],
      dispatchers: [],
      processHeartbeatInterval: 100,
      processAliveThreshold: 600,
    });
    try {
      expect(await firm.drain({ processHeartbeatInterval: 100 })).toBe(1);
    } finally {
      await supervisor.stop();
    }
    expect(runs).toBe(1);
    expect(await firm.getJob(id)).toMatchObject({ state: "finished", attempts: 1 });
  });
});
