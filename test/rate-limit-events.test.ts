import { expect, it } from "vitest";
import { type JobEventMap, RateLimitedError } from "../src/index.js";
import { describeEachDatabase, enqueued, waitFor } from "./support/harness.js";
import { parseScrape } from "./support/prometheus-text.js";

const FAST = { mode: "async", workers: [{ queues: "*", concurrency: 4, pollingInterval: "20ms" }] } as const;

describeEachDatabase("rate limit events and metrics", (env) => {
  it("job.rateLimited when a job is held for its budget, and when its handler throws RateLimitedError", async () => {
    const firm = env.firm();
    const heard: JobEventMap["job.rateLimited"][] = [];
    firm.events.on("job.rateLimited", (event) => void heard.push(event));
    let calls = 0;
    const job = firm.defineJob(
      "call-api",
      async (_args: { account: string }) => {
        calls++;
        if (calls === 1) throw new RateLimitedError({ retryIn: "1h" });
      },
      { queue: "api", rateLimit: { limit: 5, period: "1s", key: (args) => args.account } },
    );
    const plain = firm.defineJob("plain", async () => {});
    const id = await enqueued(job.enqueue({ account: "acme" }));
    await plain.enqueue(null);
    expect(heard).toEqual([
      { jobId: id, job: "call-api", queue: "api", budget: "job:call-api/acme", mayStartAt: null },
    ]);
    const before = Date.now();
    await firm.start(FAST);
    await waitFor(() => heard.length === 2, 10_000, "the RateLimitedError's event");
    const thrown = heard[1]!;
    expect(thrown).toMatchObject({
      jobId: id,
      job: "call-api",
      queue: "api",
      budget: "job:call-api/acme",
      attempt: 1,
      processId: expect.any(Number),
    });
    expect(thrown.error).toBeInstanceOf(RateLimitedError);
    expect(thrown.mayStartAt!.getTime()).toBeGreaterThan(before + 3_500_000);
    expect((await firm.getJob(id))?.rateLimit?.mayStartAt?.getTime()).toBe(thrown.mayStartAt!.getTime());
  });

  it("count firm_queue_jobs_rate_limited_total, and gauge the jobs waiting for budget from the database", async () => {
    const firm = env.firm();
    firm.metrics.configure({ gaugeInterval: 0 });
    firm.metrics.enable();
    const job = firm.defineJob("slow-api", async () => {}, { queue: "api", rateLimit: { limit: 1, period: "1m" } });
    await job.enqueueAll([null, null, null]);
    const held = parseScrape(await firm.metrics.text());
    expect(held.types.get("firm_queue_jobs_rate_limited_total")).toBe("counter");
    expect(held.value("firm_queue_jobs_rate_limited_total", { queue: "api", job: "slow-api" })).toBe(3);
    expect(held.types.get("firm_queue_jobs_waiting_for_budget")).toBe("gauge");
    expect(held.value("firm_queue_jobs_waiting_for_budget", { queue: "api" })).toBe(3);
    await firm.start(FAST);
    await waitFor(async () => (await firm.inspect.queues())[0]?.throttled === 2, 10_000, "one started");
    const after = parseScrape(await firm.metrics.text());
    expect(after.value("firm_queue_jobs_waiting_for_budget", { queue: "api" })).toBe(2);
    expect(after.value("firm_queue_jobs_rate_limited_total", { queue: "api", job: "slow-api" })).toBe(3);
  });
});
