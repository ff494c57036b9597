import { expect, it } from "vitest";
import { ConfigurationError, RateLimitedError } from "../src/index.js";
import { countRows, describeEachDatabaseAtOnce, enqueued, waitFor } from "./support/harness.js";
import { chargedStarts, mostStartsInWindow } from "./support/rate-window.js";

const POLL_MS = 50;
const FAST = { mode: "async", workers: [{ queues: "*", concurrency: 8, pollingInterval: POLL_MS }] } as const;
/**
 * Well past one polling interval: every worker has read the budgets again. Twenty intervals, not
 * one: with the three databases' tests sharing one event loop, a worker's poll can run late.
 */
const seen = () => new Promise((resolve) => setTimeout(resolve, 20 * POLL_MS));

describeEachDatabaseAtOnce("queue rate limits", (env) => {
  it("refuse bad input with a ConfigurationError naming the option, writing nothing", async () => {
    const firm = env.firm();
    const bad: [unknown, unknown, RegExp][] = [
      ["mail", { limit: 0, period: "1s" }, /queues\.setRateLimit option\.limit must be a whole number of at least 1/],
      ["mail", { limit: 2.5, period: "1s" }, /queues\.setRateLimit option\.limit/],
      ["mail", { limit: 5, period: "50ms" }, /queues\.setRateLimit option\.period must be from 100 ms/],
      ["mail", { limit: 5, period: "often" }, /queues\.setRateLimit option\.period must be milliseconds/],
      ["mail", { limit: 5 }, /queues\.setRateLimit option\.period is required/],
      ["mail", { limit: 5, period: "1s", key: () => "x" }, /Unknown queues\.setRateLimit option "key"/],
      ["mail", "10/1s", /queues\.setRateLimit options must be an object/],
      ["", { limit: 5, period: "1s" }, /queues\.setRateLimit queue/],
      [42, { limit: 5, period: "1s" }, /queues\.setRateLimit queue/],
    ];
    for (const [queue, options, message] of bad) {
      await expect(firm.queues.setRateLimit(queue as string, options as never)).rejects.toThrow(ConfigurationError);
      await expect(firm.queues.setRateLimit(queue as string, options as never)).rejects.toThrow(message);
    }
    await expect(firm.queues.clearRateLimit("" as string)).rejects.toThrow(/queues\.clearRateLimit queue/);
    expect(await countRows(await env.db(), "firm_queue_rate_budgets")).toBe(0);
    expect(await firm.queues.clearRateLimit("mail")).toBe(false);
  });

  it("is stored, changed and removed", async () => {
    const firm = env.firm();
    await firm.queues.setRateLimit("mail", { limit: 5, period: "1s" });
    await firm.queues.setRateLimit("mail", { limit: 7, period: 2000 });
    const db = await env.db();
    const rows = await db.selectFrom("firm_queue_rate_budgets").selectAll().execute();
    expect(rows).toEqual([
      expect.objectContaining({ key: "queue:mail", queue_name: "mail", limit_count: 7, period_ms: 2000 }),
    ]);
    expect(await firm.queues.clearRateLimit("mail")).toBe(true);
    expect(await countRows(db, "firm_queue_rate_budgets")).toBe(0);
  });

  it("set while two supervisors run: the window holds for the queue only; cleared: its jobs run freely again", async () => {
    const db = await env.db();
    const { starts, note } = chargedStarts(db);
    const define = () => {
      const firm = env.firm();
      const job = firm.defineJob("deliver", (args: { queue: string }, context) => note(args.queue, context.jobId));
      return { firm, job };
    };
    const one = define();
    const two = define();
    await Promise.all([one.firm.start(FAST), two.firm.start(FAST)]);
    await one.firm.queues.setRateLimit("mail", { limit: 4, period: "1s" });
    await seen();
    await one.job.enqueueAll(
      Array.from({ length: 12 }, () => ({ queue: "mail" })),
      { queue: "mail" },
    );
    await one.job.enqueueAll(
      Array.from({ length: 6 }, () => ({ queue: "other" })),
      { queue: "other" },
    );
    await waitFor(() => starts.get("other")?.length === 6, 5000, "the unlimited queue ran");
    await waitFor(() => starts.get("mail")?.length === 12, 20_000, "12 starts in mail");
    const mail = starts.get("mail")!;
    expect(mostStartsInWindow(mail, 1000)).toBeLessThanOrEqual(4);
    expect(Math.max(...mail) - Math.min(...mail)).toBeGreaterThanOrEqual(2000);
    // The other queue did not wait for mail's budget.
    expect(Math.max(...starts.get("other")!)).toBeLessThan(Math.min(...mail) + 1000);

    expect(await two.firm.queues.clearRateLimit("mail")).toBe(true);
    await seen();
    starts.set("mail", []);
    await one.job.enqueueAll(
      Array.from({ length: 20 }, () => ({ queue: "mail" })),
      { queue: "mail" },
    );
    await waitFor(() => starts.get("mail")?.length === 20, 10_000, "20 starts after the limit went");
    expect(mostStartsInWindow(starts.get("mail")!, 1000)).toBeGreaterThan(4);
  });

  it("a RateLimitedError from a job without a limit of its own closes its queue's budget", async () => {
    const firm = env.firm();
    const runs: number[] = [];
    const job = firm.defineJob(
      "queued-call",
      async (args: { throws: boolean }) => {
        runs.push(Date.now());
        if (args.throws) throw new RateLimitedError({ retryIn: "1h" });
      },
      { queue: "api" },
    );
    await firm.queues.setRateLimit("api", { limit: 100, period: "1s" });
    await firm.start(FAST);
    const limited = await enqueued(job.enqueue({ throws: true }));
    await waitFor(async () => (await firm.getJob(limited))?.lastError !== undefined, 10_000, "the 429");
    const detail = await firm.getJob(limited);
    expect(detail).toMatchObject({ state: "ready", attempts: 0 });
    expect(detail?.lastError?.message).toMatch(/budget queue:api closed until/);
    const next = await enqueued(job.enqueue({ throws: false }));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await firm.getJob(next))?.state).toBe("ready");
    expect(runs).toHaveLength(1);
    // Removing the queue's limit reopens it.
    await firm.queues.clearRateLimit("api");
    await waitFor(async () => (await firm.getJob(next))?.state === "finished", 5000, "ran after unlimit");
  });
  it("a job with its own limit in a limited queue obeys both budgets, and counts in the queue's", async () => {
    const db = await env.db();
    const { starts, note } = chargedStarts(db);
    const firm = env.firm();
    const own = firm.defineJob("own-limit", (_: null, context) => note("own", context.jobId), {
      queue: "api",
      rateLimit: { limit: 2, period: "1s" },
    });
    const plain = firm.defineJob("plain", (_: null, context) => note("plain", context.jobId), { queue: "api" });
    await firm.queues.setRateLimit("api", { limit: 3, period: "1s" });
    await own.enqueueAll(Array.from({ length: 6 }, () => null));
    await plain.enqueueAll(Array.from({ length: 6 }, () => null));
    const began = Date.now();
    await firm.start(FAST);
    await waitFor(() => starts.get("own")?.length === 6 && starts.get("plain")?.length === 6, 20_000, "12 starts");
    const all = [...starts.get("own")!, ...starts.get("plain")!];
    expect(mostStartsInWindow(starts.get("own")!, 1000)).toBeLessThanOrEqual(2);
    expect(mostStartsInWindow(all, 1000)).toBeLessThanOrEqual(3);
    // 12 starts at 3 per second: three full windows past the first, not much more.
    expect(Math.max(...all) - Math.min(...all)).toBeGreaterThanOrEqual(3000);
    expect(Math.max(...all) - began).toBeLessThan(9000);
    expect(await countRows(db, "firm_queue_throttled_executions")).toBe(0);
  });
});
