import { expect, it } from "vitest";
import { ConfigurationError, RateLimitedError } from "../src/index.js";
import { describeEachDatabase, waitFor } from "./support/harness.js";

describeEachDatabase("inspect.rateLimits", (env) => {
  it("lists each budget with its limit, period, starts in the window, jobs waiting and reopening", async () => {
    const firm = env.firm();
    const started: number[] = [];
    const slow = firm.defineJob("slow", async () => void started.push(Date.now()), {
      rateLimit: { limit: 2, period: "1m" },
    });
    let thrown = false;
    const closer = firm.defineJob(
      "closer",
      async () => {
        if (!thrown) {
          thrown = true;
          throw new RateLimitedError({ retryIn: "1h" });
        }
      },
      { rateLimit: { limit: 10, period: "1s" } },
    );
    const plain = firm.defineJob("plain", async () => {}, { queue: "api" });
    await firm.queues.setRateLimit("api", { limit: 5, period: "1s" });
    await firm.queues.pause("api");
    await plain.enqueue(null);
    await slow.enqueueAll([null, null, null, null]);
    await closer.enqueue(null);
    expect(await firm.inspect.rateLimits()).toEqual([
      expect.objectContaining({ budget: "job:closer", used: 0, waiting: 1, reopensAt: null }),
      expect.objectContaining({ budget: "job:slow", queue: null, limit: 2, periodMs: 60_000, used: 0, waiting: 4 }),
      expect.objectContaining({ budget: "queue:api", queue: "api", limit: 5, periodMs: 1000, used: 0, waiting: 1 }),
    ]);
    const supervisor = await firm.start({ mode: "async", workers: [{ queues: "*", pollingInterval: "20ms" }] });
    await waitFor(() => started.length === 2 && thrown, 10_000, "two slow starts and the 429");
    await waitFor(async () => (await firm.inspect.rateLimits())[0]?.closedUntil !== null, 10_000, "closed");
    await supervisor.stop();
    const [closed, full, queue] = await firm.inspect.rateLimits();
    expect(closed).toMatchObject({ budget: "job:closer", used: 1, waiting: 1 });
    expect(closed!.closedUntil!.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
    expect(closed!.reopensAt).toEqual(closed!.closedUntil);
    expect(full).toMatchObject({ budget: "job:slow", used: 2, waiting: 2, closedUntil: null });
    // Full until its first start leaves the minute's window.
    expect(full!.reopensAt!.getTime()).toBeGreaterThan(Date.now() + 50_000);
    expect(full!.reopensAt!.getTime()).toBeLessThanOrEqual(Math.min(...started) + 60_000 + 1000);
    expect(queue).toMatchObject({ budget: "queue:api", used: 0, waiting: 1, closedUntil: null, reopensAt: null });
    expect(await firm.inspect.rateLimits({ limit: 1 })).toHaveLength(1);
  });

  it("refuses bad options with a ConfigurationError", async () => {
    const firm = env.firm();
    await expect(firm.inspect.rateLimits({ limit: 0 })).rejects.toThrow(ConfigurationError);
    await expect(firm.inspect.rateLimits({ limit: 1001 })).rejects.toThrow(/at most 1000/);
    await expect(firm.inspect.rateLimits({ colour: 1 } as never)).rejects.toThrow(/Unknown inspect\.rateLimits option/);
    expect(await firm.inspect.rateLimits()).toEqual([]);
  });
});
