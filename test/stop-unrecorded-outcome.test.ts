import { expect, it } from "vitest";
import { countRows, describeEachDatabaseAtOnce, enqueued, waitFor } from "./support/harness.js";
import { installFinishWriteFault } from "./support/faults.js";

/*
 * A graceful stop waits a bounded time for the outcome writes of jobs whose handler has ended
 * (issue 10, defect 8). When it gives up, such a job must still not be put back in line: that
 * would run it again with no attempt counted and no trace of the first run. Its claim is kept,
 * and recovered as a crash's would be once the process is gone.
 */
describeEachDatabaseAtOnce("a stop that cannot record a job's outcome", (env) => {
  it("keeps the claim of a job that ran (never released), and recovery fails it with ProcessMissingError", async () => {
    const db = await env.db();
    const fault = await installFinishWriteFault(db, env.dialect);
    try {
      await fault.on();
      const firm = env.firm();
      let runs = 0;
      firm.defineJob("quick", async () => void runs++);
      const id = await enqueued(firm.enqueue("quick", null));
      const supervisor = await firm.start({
        workers: [{ queues: "*", pollingInterval: 50 }],
        dispatchers: [],
        shutdownTimeout: 100,
      });
      await waitFor(() => runs === 1, 10_000, "the handler to run");
      // The finish keeps failing for the whole stop, past its wait for outcome writes.
      await supervisor.stop();
      expect(await firm.getJob(id)).toMatchObject({ state: "claimed", attempts: 0 });
      expect(await countRows(db, "firm_queue_processes")).toBe(0);
      await fault.off();

      // The next supervisor's first recovery pass finds the claim without a process.
      const next = env.firm();
      next.defineJob("quick", async () => void runs++);
      const again = await next.start({ workers: [{ queues: "*", pollingInterval: 50 }], dispatchers: [] });
      try {
        await waitFor(async () => (await next.getJob(id))?.state === "failed", 10_000, "the claim recovered");
      } finally {
        await again.stop();
      }
      expect(await next.getJob(id)).toMatchObject({
        state: "failed",
        attempts: 1,
        error: { name: "ProcessMissingError" },
      });
      expect(runs).toBe(1);
      expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
    } finally {
      await fault.remove();
    }
  });
});
