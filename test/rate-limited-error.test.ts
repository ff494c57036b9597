import { describe, expect, it } from "vitest";
import { ConfigurationError, FirmQueueError, RateLimitedError } from "../src/index.js";
import { describeEachDatabaseAtOnce, enqueued, waitFor } from "./support/harness.js";
import { START_SKEW_MS } from "./support/rate-window.js";

const FAST = { mode: "async", workers: [{ queues: "*", concurrency: 5, pollingInterval: "20ms" }] } as const;

describe("RateLimitedError", () => {
  it("takes { retryIn } as milliseconds or a duration string", () => {
    expect(new RateLimitedError({ retryIn: "30s" }).retryInMs).toBe(30_000);
    expect(new RateLimitedError({ retryIn: 250 }).retryInMs).toBe(250);
    const cause = new Error("429 Too Many Requests");
    const error = new RateLimitedError({ retryIn: "1m", cause });
    expect(error).toBeInstanceOf(FirmQueueError);
    expect(error.name).toBe("RateLimitedError");
    expect(error.cause).toBe(cause);
    expect(error.message).toMatch(/Rate limited: the job's budget is closed for 60000 ms/);
  });

  it("refuses a bad retryIn with a ConfigurationError naming it", () => {
    const bad: [unknown, RegExp][] = [
      [undefined, /takes an object such as \{ retryIn: "30s" \}/],
      ["30s", /takes an object/],
      [{}, /RateLimitedError option retryIn is required/],
      [{ retryIn: -1 }, /RateLimitedError option retryIn must be a non-negative number/],
      [{ retryIn: "soon" }, /RateLimitedError option retryIn must be milliseconds or a string/],
      [{ retryIn: Number.NaN }, /RateLimitedError option retryIn/],
      [{ retryIn: "1s", after: "1s" }, /Unknown RateLimitedError option "after"/],
    ];
    for (const [options, message] of bad) {
      expect(() => new RateLimitedError(options as never)).toThrow(ConfigurationError);
      expect(() => new RateLimitedError(options as never)).toThrow(message);
    }
  });
});

describeEachDatabaseAtOnce("RateLimitedError from a handler", (env) => {
  it("puts the job back with no attempt counted and closes its key's budget on every supervisor", async () => {
    const runs: { account: string; at: number; host: number }[] = [];
    const define = (host: number) => {
      const firm = env.firm();
      const job = firm.defineJob(
        "call-api",
        async (args: { account: string; throws?: boolean }) => {
          runs.push({ account: args.account, at: Date.now(), host });
          if (args.throws) throw new RateLimitedError({ retryIn: "1h", cause: new Error("HTTP 429") });
        },
        { rateLimit: { limit: 50, period: "1s", key: (args) => args.account }, retry: { attempts: 1 } },
      );
      return { firm, job };
    };
    const one = define(1);
    const two = define(2);
    await Promise.all([one.firm.start(FAST), two.firm.start(FAST)]);
    const limited = await enqueued(one.job.enqueue({ account: "a", throws: true }));
    await waitFor(async () => (await one.firm.getJob(limited))?.lastError !== undefined, 10_000, "the 429");
    const detail = await one.firm.getJob(limited);
    expect(detail).toMatchObject({ state: "throttled", attempts: 0, rateLimit: { budget: "job:call-api/a" } });
    expect(detail?.lastError?.name).toBe("RateLimitedError");
    expect(detail?.lastError?.message).toMatch(
      /^Rate limited: the job's budget is closed for 3600000 ms; budget job:call-api\/a closed until \d{4}-.*; no attempt counted$/,
    );
    // Its mayStartAt is the budget's reopening, about an hour from now.
    const opens = detail?.rateLimit?.mayStartAt?.getTime() ?? 0;
    expect(opens - Date.now()).toBeGreaterThan(3_500_000);
    // Jobs of the closed key wait on both supervisors; another key of the same job runs at once.
    const waiting = await enqueued(two.job.enqueue({ account: "a" }));
    const other = await enqueued(two.job.enqueue({ account: "b" }));
    await waitFor(async () => (await one.firm.getJob(other))?.state === "finished", 10_000, "key b ran");
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await one.firm.getJob(waiting))?.state).toBe("throttled");
    expect(runs.filter((run) => run.account === "a")).toHaveLength(1);
  });

  it("reopens the budget after retryIn: no start of that budget before then, on either supervisor", async () => {
    const runs: { account: string; at: number }[] = [];
    let thrown = false;
    const define = () => {
      const firm = env.firm();
      const job = firm.defineJob(
        "reopens",
        async (args: { account: string }) => {
          runs.push({ account: args.account, at: Date.now() });
          if (!thrown) {
            thrown = true;
            throw new RateLimitedError({ retryIn: 1200 });
          }
        },
        { rateLimit: { limit: 50, period: "1s" }, retry: { attempts: 1 } },
      );
      return { firm, job };
    };
    const one = define();
    const two = define();
    await Promise.all([one.firm.start(FAST), two.firm.start(FAST)]);
    const first = await enqueued(one.job.enqueue({ account: "first" }));
    await waitFor(async () => (await one.firm.getJob(first))?.lastError !== undefined, 10_000, "the 429");
    const later = await enqueued(two.job.enqueue({ account: "later" }));
    await waitFor(
      async () =>
        (await one.firm.getJob(first))?.state === "finished" && (await one.firm.getJob(later))?.state === "finished",
      10_000,
      "both ran",
    );
    const thrownAt = runs[0]!.at;
    const after = runs.slice(1);
    expect(after).toHaveLength(2);
    for (const run of after) expect(run.at - thrownAt).toBeGreaterThanOrEqual(1200 - START_SKEW_MS);
    // One attempt counted, the run that finished: the rate-limited run counted none.
    expect((await one.firm.getJob(first))?.attempts).toBe(1);
  });

  it("never counts an attempt: a job allowed one attempt that is rate limited three times still finishes", async () => {
    const firm = env.firm();
    let calls = 0;
    const job = firm.defineJob(
      "patient",
      async () => {
        calls++;
        if (calls <= 3) throw new RateLimitedError({ retryIn: 100 });
      },
      { rateLimit: { limit: 10, period: "1s" }, retry: { attempts: 1 } },
    );
    const id = await enqueued(job.enqueue(null));
    await firm.start(FAST);
    await waitFor(async () => (await firm.getJob(id))?.state === "finished", 10_000, "finished");
    expect(calls).toBe(4);
    // The run that finished is the one attempt counted.
    expect((await firm.getJob(id))?.attempts).toBe(1);
  });

  it("without any budget (no limit on the job or its queue), only that job waits out retryIn", async () => {
    const firm = env.firm();
    const runs: { n: number; at: number }[] = [];
    const job = firm.defineJob(
      "unbudgeted",
      async (args: { n: number }) => {
        runs.push({ n: args.n, at: Date.now() });
        if (args.n === 1 && runs.filter((run) => run.n === 1).length === 1)
          throw new RateLimitedError({ retryIn: 3000 });
      },
      { retry: { attempts: 1 } },
    );
    const id = await enqueued(job.enqueue({ n: 1 }));
    await firm.start(FAST);
    await waitFor(async () => (await firm.getJob(id))?.state === "scheduled", 10_000, "scheduled again");
    const detail = await firm.getJob(id);
    expect(detail?.attempts).toBe(0);
    expect(detail?.lastError?.message).toMatch(/no budget to close .*: the job waits until/);
    const other = await enqueued(job.enqueue({ n: 2 }));
    await waitFor(async () => (await firm.getJob(other))?.state === "finished", 5000, "another job of the name ran");
    await waitFor(async () => (await firm.getJob(id))?.state === "finished", 10_000, "the job ran again");
    const [thrownRun, rerun] = runs.filter((run) => run.n === 1);
    const otherRun = runs.find((run) => run.n === 2);
    // The other job did not wait out the first one's retryIn: it ran well inside it.
    expect(otherRun!.at - thrownRun!.at).toBeLessThan(2000);
    expect(otherRun!.at).toBeLessThan(rerun!.at);
    expect(rerun!.at - thrownRun!.at).toBeGreaterThanOrEqual(3000 - START_SKEW_MS);
  });
});
