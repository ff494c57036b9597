import { expect, it } from "vitest";
import { countRows, describeEachDatabaseAtOnce } from "./support/harness.js";
import { chargedStartMs, mostStartsInWindow } from "./support/rate-window.js";

describeEachDatabaseAtOnce("drain with rate limits", (env) => {
  it("runs jobs waiting for their own budget as the budget allows, then returns", async () => {
    const firm = env.firm();
    const starts: number[] = [];
    const db = await env.db();
    const job = firm.defineJob(
      "limited",
      async (_: null, context) => void starts.push(await chargedStartMs(db, context.jobId)),
      { rateLimit: { limit: 2, period: "1s" } },
    );
    await job.enqueueAll(Array.from({ length: 5 }, () => null));
    expect(await firm.drain({ concurrency: 4 })).toBe(5);
    expect(starts).toHaveLength(5);
    expect(mostStartsInWindow(starts, 1000)).toBeLessThanOrEqual(2);
    // 5 starts at 2 per second: two full windows past the first.
    expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(2000);
    expect(await countRows(await env.db(), "firm_queue_throttled_executions")).toBe(0);
  });

  it("obeys a queue's limit, and runs the queue's jobs as it allows", async () => {
    const firm = env.firm();
    const starts: number[] = [];
    const db = await env.db();
    const job = firm.defineJob(
      "plain",
      async (_: null, context) => void starts.push(await chargedStartMs(db, context.jobId)),
      { queue: "api" },
    );
    await firm.queues.setRateLimit("api", { limit: 2, period: "1s" });
    await job.enqueueAll(Array.from({ length: 5 }, () => null));
    expect(await firm.drain({ concurrency: 4 })).toBe(5);
    expect(mostStartsInWindow(starts, 1000)).toBeLessThanOrEqual(2);
    expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(2000);
  });

  it("does not wait for budgets of queues it does not drain, nor of paused queues", async () => {
    const firm = env.firm();
    const job = firm.defineJob("elsewhere", async () => {}, { queue: "other", rateLimit: { limit: 1, period: "1m" } });
    await job.enqueueAll([null, null]);
    const began = Date.now();
    expect(await firm.drain({ queues: "mine" })).toBe(0);
    await firm.queues.pause("other");
    expect(await firm.drain({ queues: "other" })).toBe(0);
    expect(Date.now() - began).toBeLessThan(5000);
    expect(await countRows(await env.db(), "firm_queue_throttled_executions")).toBe(2);
  });
});
