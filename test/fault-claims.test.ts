import { expect, it } from "vitest";
import { describeEachDatabase, enqueued, waitFor } from "./support/harness.js";
import { installFault, jobInQueue } from "./support/faults.js";

describeEachDatabase("faults while claiming", (env) => {
  it("a claim that fails on a later queue does not strand what the earlier queues claimed", async () => {
    const db = await env.db();
    const fault = await installFault(db, env.dialect, { table: "firm_queue_claimed_executions", event: "INSERT", when: jobInQueue("NEW", "q2") });
    try {
      await fault.on();
      const firm = env.firm();
      const ran: string[] = [];
      firm.defineJob("record", async (queue: string) => void ran.push(queue));
      const first = await enqueued(firm.enqueue("record", "q1", { queue: "q1" }));
      const second = await enqueued(firm.enqueue("record", "q2", { queue: "q2" }));
      let errors = 0;
      firm.addHooks({ onError: () => void errors++ });
      const supervisor = await firm.start({ workers: [{ queues: ["q1", "q2"], pollingInterval: 50 }], dispatchers: [] });
      try {
        await waitFor(() => errors > 0, 10_000, "the claim on q2 to fail");
        await fault.off();
        await waitFor(async () => (await firm.getJob(first))?.state === "finished" && (await firm.getJob(second))?.state === "finished", 10_000, "both jobs to finish");
        expect(ran.sort()).toEqual(["q1", "q2"]);
      } finally {
        await supervisor.stop();
      }
    } finally {
      await fault.remove();
    }
  });
});
