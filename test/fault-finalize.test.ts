import { expect, it } from "vitest";
import { describeEachDatabaseAtOnce, enqueued, waitFor } from "./support/harness.js";
import { installFault, installFinishWriteFault } from "./support/faults.js";

describeEachDatabaseAtOnce("faults while recording a job's outcome", (env) => {
  it("a finish or fail write that errors is retried until it lands; the job is neither stranded nor run again", async () => {
    const db = await env.db();
    // Finishing and failing both remove the claim first: make that fail while the fault is on.
    const fault = await installFault(db, env.dialect, { table: "firm_queue_claimed_executions", event: "DELETE" });
    try {
      await fault.on();
      const firm = env.firm();
      const runs: string[] = [];
      firm.defineJob("works", async () => void runs.push("works"));
      firm.defineJob(
        "breaks",
        async () => {
          runs.push("breaks");
          throw new Error("boom");
        },
        { retry: { attempts: 1 } },
      );
      const good = await enqueued(firm.enqueue("works", null));
      const bad = await enqueued(firm.enqueue("breaks", null));
      const supervisor = await firm.start({
        workers: [{ queues: "*", concurrency: 2, pollingInterval: 50 }],
        dispatchers: [],
      });
      try {
        await waitFor(() => runs.length === 2, 10_000, "both handlers to run");
        // Both writes are failing now; give them a few retries before the database recovers.
        await new Promise((resolve) => setTimeout(resolve, 500));
        await fault.off();
        await waitFor(
          async () => (await firm.getJob(good))?.state === "finished" && (await firm.getJob(bad))?.state === "failed",
          15_000,
          "both outcomes recorded",
        );
      } finally {
        await supervisor.stop();
      }
      expect(runs.sort()).toEqual(["breaks", "works"]);
      expect(await firm.getJob(good)).toMatchObject({ state: "finished", attempts: 1 });
      expect(await firm.getJob(bad)).toMatchObject({ state: "failed", attempts: 1, error: { message: "boom" } });
    } finally {
      await fault.remove();
    }
  });

  it("a graceful stop never puts back a job whose handler has ended; it waits for the finish to be written", async () => {
    const db = await env.db();
    // Marking the job finished fails while the fault is on.
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
      const stopping = supervisor.stop();
      // The database recovers after the shutdown timeout has passed, while the stop is under way.
      await new Promise((resolve) => setTimeout(resolve, 600));
      await fault.off();
      await stopping;
      expect(await firm.getJob(id)).toMatchObject({ state: "finished", attempts: 1 });
      expect(runs).toBe(1);
    } finally {
      await fault.remove();
    }
  });
  it("many outcome writes retrying at once raise no listener-leak warning (each waits on the same give-up signal)", async () => {
    const db = await env.db();
    const fault = await installFault(db, env.dialect, { table: "firm_queue_claimed_executions", event: "DELETE" });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    try {
      await fault.on();
      const firm = env.firm();
      let runs = 0;
      const breaks = firm.defineJob(
        "breaks",
        async () => {
          runs++;
          throw new Error("boom");
        },
        { retry: { attempts: 1 } },
      );
      const jobs = 14;
      const ids = (await breaks.enqueueAll(Array.from({ length: jobs }, () => null))).map((result) =>
        Number(result.id),
      );
      const supervisor = await firm.start({
        workers: [{ queues: "*", concurrency: jobs, pollingInterval: 50 }],
        dispatchers: [],
      });
      try {
        await waitFor(() => runs === jobs, 15_000, "every handler to run");
        // Every failure write is failing and retrying now, all at once.
        await new Promise((resolve) => setTimeout(resolve, 500));
        await fault.off();
        await waitFor(
          async () => (await Promise.all(ids.map((id) => firm.getJob(id)))).every((job) => job?.state === "failed"),
          20_000,
          "every outcome recorded",
        );
      } finally {
        await supervisor.stop();
      }
      // Node emits warnings on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await fault.remove();
    }
  });
});
