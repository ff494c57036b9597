import { expect, it } from "vitest";
import { describeEachDatabaseAtOnce, enqueued, waitFor } from "./support/harness.js";
import { installFault } from "./support/faults.js";
import type { Logger } from "../src/logger.js";

// The databases side by side: each waits out a 1.5 s outage and the backoff after it.
describeEachDatabaseAtOnce("polling while the database fails", (env) => {
  it("a worker whose polls keep failing reports the outage once, backs off, and says when it is over", async () => {
    const db = await env.db();
    const fault = await installFault(db, env.dialect, { table: "firm_queue_claimed_executions", event: "INSERT" });
    const lines: string[] = [];
    const logger: Logger = {
      debug() {},
      info: (message) => void lines.push(message),
      warn: (message) => void lines.push(message),
      error: (message) => void lines.push(message),
    };
    try {
      await fault.on();
      const firm = env.firm({ logger });
      let reports = 0;
      firm.addHooks({ onError: () => void reports++ });
      firm.defineJob("noop", async () => {});
      const id = await enqueued(firm.enqueue("noop", null));
      // Polling every 20 ms: without backoff, a 1.5 s outage would be some 70 failed polls and reports.
      const supervisor = await firm.start({ workers: [{ queues: "*", pollingInterval: 20 }], dispatchers: [] });
      try {
        await waitFor(() => reports > 0, 10_000, "the first failed poll");
        await new Promise((resolve) => setTimeout(resolve, 1500));
        await fault.off();
        await waitFor(
          async () => (await firm.getJob(id))?.state === "finished",
          15_000,
          "the job to run once the database works",
        );
      } finally {
        await supervisor.stop();
      }
      expect(reports).toBe(1);
      expect(lines.filter((line) => /^worker works again after failing for \d+ ms$/.test(line))).toHaveLength(1);
    } finally {
      await fault.remove();
    }
  });
});
