import { expect, it } from "vitest";
import { ConfigurationError } from "../src/index.js";
import { countRows, describeEachDatabaseAtOnce, enqueued, waitFor } from "./support/harness.js";
import { chargedStartMs, chargedStarts, mostStartsInWindow } from "./support/rate-window.js";

const FAST = { mode: "async", workers: [{ queues: "*", concurrency: 10, pollingInterval: "20ms" }] } as const;

describeEachDatabaseAtOnce("rate limits", (env) => {
  it("refuse bad rateLimit options at definition, naming the option", () => {
    const firm = env.firm();
    const bad: [unknown, RegExp][] = [
      [{ limit: 0, period: "1s" }, /rateLimit\.limit must be a whole number of at least 1/],
      [{ limit: 1.5, period: "1s" }, /rateLimit\.limit/],
      [{ limit: 5, period: "99ms" }, /rateLimit\.period must be from 100 ms/],
      [{ limit: 5, period: 50 }, /rateLimit\.period/],
      [{ limit: 5, period: "soon" }, /rateLimit\.period must be milliseconds or a string/],
      [{ limit: 5 }, /rateLimit\.period is required/],
      [{ limit: 5, period: "1s", per: "x" }, /Unknown defineJob\("j"\) option rateLimit "per"/],
      [{ limit: 5, period: "1s", key: "account" }, /rateLimit\.key must be a function/],
      [{ limit: 5, period: "1s", group: "" }, /rateLimit\.group/],
      ["10/1s", /rateLimit must be an object/],
    ];
    for (const [rateLimit, message] of bad) {
      expect(() => firm.defineJob("j", async () => {}, { rateLimit } as never)).toThrow(ConfigurationError);
      expect(() => firm.defineJob("j", async () => {}, { rateLimit } as never)).toThrow(message);
    }
    expect(() => firm.declareJob("d", { rateLimit: { limit: 0, period: "1s" } })).toThrow(
      /declareJob\("d"\) option rateLimit\.limit/,
    );
  });

  it("refuse a key function that throws or returns a non-key at enqueue, writing nothing (enqueueAll: nothing of the call)", async () => {
    const firm = env.firm();
    const job = firm.defineJob("keyed", async (_args: { account: unknown }) => {}, {
      rateLimit: { limit: 5, period: "1s", key: (args) => args.account as string },
    });
    await expect(job.enqueue({ account: { nested: true } })).rejects.toThrow(ConfigurationError);
    await expect(job.enqueue({ account: null })).rejects.toThrow(/rateLimit\.key function of job "keyed" must return/);
    const throwing = firm.defineJob("throwing", async () => {}, {
      rateLimit: {
        limit: 5,
        period: "1s",
        key: () => {
          throw new Error("no account");
        },
      },
    });
    await expect(throwing.enqueue(null)).rejects.toThrow(/rateLimit\.key function of job "throwing" threw: no account/);
    await expect(job.enqueueAll([{ account: "a" }, { account: "b" }, { account: undefined }])).rejects.toThrow(
      ConfigurationError,
    );
    const db = await env.db();
    expect(await countRows(db, "firm_queue_jobs")).toBe(0);
    expect(await countRows(db, "firm_queue_rate_budgets")).toBe(0);
    expect(await countRows(db, "firm_queue_throttled_executions")).toBe(0);
  });

  it("park a due rate-limited job as throttled, never ready; getJob names its budget", async () => {
    const firm = env.firm();
    const job = firm.defineJob("send", async (_args: { to: string }) => {}, {
      rateLimit: { limit: 2, period: "1s", key: (args) => args.to },
    });
    const id = await enqueued(job.enqueue({ to: "acme" }));
    expect(await firm.getJob(id)).toMatchObject({
      state: "throttled",
      rateLimit: { budget: "job:send/acme", mayStartAt: null },
    });
    const db = await env.db();
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(0);
    const budget = await db.selectFrom("firm_queue_rate_budgets").selectAll().executeTakeFirstOrThrow();
    expect(budget).toMatchObject({ key: "job:send/acme", limit_count: 2, period_ms: 1000, queue_name: null });
    expect(budget.available_at).not.toBeNull();
    // Scheduled for later: its budget row exists already, the job waits in scheduled.
    const later = await enqueued(job.enqueue({ to: "initech" }, { wait: "1h" }));
    expect((await firm.getJob(later))?.state).toBe("scheduled");
    expect(await countRows(db, "firm_queue_rate_budgets")).toBe(2);
  });

  it("hold the sliding window: at most `limit` starts in any period, and the limit is reached", async () => {
    const firm = env.firm();
    const starts: number[] = [];
    const db = await env.db();
    const job = firm.defineJob(
      "tick",
      async (_: null, context) => {
        starts.push(await chargedStartMs(db, context.jobId));
      },
      { rateLimit: { limit: 5, period: "1s" } },
    );
    await job.enqueueAll(Array.from({ length: 16 }, () => null));
    await firm.start(FAST);
    await waitFor(() => starts.length === 16, 20_000, "16 starts");
    expect(mostStartsInWindow(starts, 1000)).toBeLessThanOrEqual(5);
    // 16 starts at 5 per second need three full windows past the first: not much more.
    const took = Math.max(...starts) - Math.min(...starts);
    expect(took).toBeGreaterThanOrEqual(3000);
    expect(took).toBeLessThan(8000);
    // The first window is used in full at once.
    expect(starts.filter((at) => at - Math.min(...starts) < 1000).length).toBe(5);
  });

  it("give each key its own budget, and a group one budget across job names", async () => {
    const firm = env.firm();
    const db = await env.db();
    const { starts, note } = chargedStarts(db);
    const perKey = firm.defineJob("per-key", (args: { k: string }, context) => note(`k/${args.k}`, context.jobId), {
      rateLimit: { limit: 2, period: "1s", key: (args) => args.k },
    });
    const a = firm.defineJob("grouped-a", (_: null, context) => note("group", context.jobId), {
      rateLimit: { limit: 3, period: "1s", group: "shared" },
    });
    const b = firm.defineJob("grouped-b", (_: null, context) => note("group", context.jobId), {
      rateLimit: { limit: 3, period: "1s", group: "shared" },
    });
    await perKey.enqueueAll(Array.from({ length: 6 }, (_, i) => ({ k: i % 2 === 0 ? "x" : "y" })));
    await a.enqueueAll([null, null, null]);
    await b.enqueueAll([null, null, null]);
    expect((await firm.getJob(await enqueued(b.enqueue(null))))?.rateLimit?.budget).toBe("job:shared");
    await firm.start(FAST);
    await waitFor(
      () =>
        (starts.get("k/x")?.length ?? 0) === 3 &&
        (starts.get("k/y")?.length ?? 0) === 3 &&
        starts.get("group")?.length === 7,
      20_000,
      "every job started",
    );
    const first = Math.min(...starts.get("k/x")!, ...starts.get("k/y")!);
    expect(mostStartsInWindow(starts.get("k/x")!, 1000)).toBeLessThanOrEqual(2);
    expect(mostStartsInWindow(starts.get("k/y")!, 1000)).toBeLessThanOrEqual(2);
    expect(mostStartsInWindow(starts.get("group")!, 1000)).toBeLessThanOrEqual(3);
    // The keys did not wait for each other: both started two in the first window.
    for (const key of ["k/x", "k/y"]) expect(starts.get(key)!.filter((at) => at - first < 900).length).toBe(2);
  });

  it("do not hold up an unlimited job behind 1,000 jobs waiting for budget", async () => {
    const firm = env.firm();
    let limitedStarts = 0;
    const slow = firm.defineJob(
      "slow-api",
      async () => {
        limitedStarts++;
      },
      { rateLimit: { limit: 1, period: "1m" } },
    );
    let unlimitedStartedAt: number | null = null;
    const free = firm.defineJob("free", async () => {
      unlimitedStartedAt = Date.now();
    });
    await slow.enqueueAll(
      Array.from({ length: 1000 }, () => null),
      { priority: -5 },
    );
    const id = await enqueued(free.enqueue(null, { priority: 10 }));
    const began = Date.now();
    await firm.start(FAST);
    await waitFor(() => unlimitedStartedAt !== null, 5000, "the unlimited job started");
    expect(unlimitedStartedAt! - began).toBeLessThan(2000);
    await waitFor(async () => (await firm.getJob(id))?.state === "finished", 5000, "the unlimited job finished");
    expect(limitedStarts).toBe(1);
    expect(await countRows(await env.db(), "firm_queue_throttled_executions")).toBe(999);
  });

  it("hold one window across two supervisors on one database", async () => {
    const starts: number[] = [];
    const db = await env.db();
    const define = () => {
      const firm = env.firm();
      const job = firm.defineJob(
        "shared-tick",
        async (_: null, context) => {
          starts.push(await chargedStartMs(db, context.jobId));
        },
        { rateLimit: { limit: 4, period: "1s" } },
      );
      return { firm, job };
    };
    const one = define();
    const two = define();
    await one.job.enqueueAll(Array.from({ length: 12 }, () => null));
    await Promise.all([one.firm.start(FAST), two.firm.start(FAST)]);
    await waitFor(() => starts.length === 12, 20_000, "12 starts");
    expect(mostStartsInWindow(starts, 1000)).toBeLessThanOrEqual(4);
    expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(2000);
  });
});
