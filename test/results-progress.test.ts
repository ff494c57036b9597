import { describe, expect, it } from "vitest";
import { createDashboard, silentLogger } from "../src/index.js";
import { MAX_RESULT_BYTES } from "../src/roles/job-result.js";
import { ProgressReporter } from "../src/roles/progress-reporter.js";
import { describeEachDatabase, enqueued, waitFor } from "./support/harness.js";
import { serveUnderPrefix } from "./support/dashboard.js";

describe("progress reporter", () => {
  it("writes at most once per interval, the latest value of each job, never blocking the caller", async () => {
    const writes: (readonly (readonly [number, string])[])[] = [];
    const reporter = new ProgressReporter(async (values) => void writes.push(values), silentLogger, 10_000);
    for (let n = 1; n <= 1000; n++) reporter.report(1, String(n));
    reporter.report(2, '"half"');
    expect(writes).toHaveLength(0);
    await reporter.flush();
    expect(writes).toEqual([
      [
        [1, "1000"],
        [2, '"half"'],
      ],
    ]);
    // A job whose handler ended gets its last value written at once.
    reporter.report(1, "1001");
    reporter.settle(1);
    await reporter.flush();
    expect(writes.at(-1)).toEqual([[1, "1001"]]);
  });

  it("a failed write is logged, not thrown, and later reports still go out", async () => {
    let fail = true;
    const written: string[] = [];
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
    const reporter = new ProgressReporter(
      async (values) => {
        if (fail) throw new Error("database down");
        for (const [, json] of values) written.push(json);
      },
      logger,
      10_000,
    );
    reporter.report(1, "1");
    await reporter.flush();
    fail = false;
    reporter.report(1, "2");
    await reporter.flush();
    expect(warnings).toHaveLength(1);
    expect(written).toEqual(["2"]);
  });
});

describeEachDatabase("results and progress", (env) => {
  it("stores what the handler returned with the finished job; getJob and inspect.job return it", async () => {
    const firm = env.firm();
    const sum = firm.defineJob("sum", async (args: { a: number; b: number }) => ({
      total: args.a + args.b,
      at: new Date("2026-01-02T03:04:05Z"),
      big: 2n ** 70n,
    }));
    const quiet = firm.defineJob("quiet", async () => {});
    const id = await enqueued(sum.enqueue({ a: 2, b: 3 }));
    const none = await enqueued(quiet.enqueue(null));
    expect(await firm.drain()).toBe(2);
    const job = await firm.getJob(id);
    expect(job).toMatchObject({ state: "finished", result: { total: 5, big: 2n ** 70n } });
    expect((job!.result as { at: Date }).at).toEqual(new Date("2026-01-02T03:04:05Z"));
    expect((await firm.inspect.job(id))?.result).toEqual(job?.result);
    expect(await firm.getJob(none)).not.toHaveProperty("result");
  });

  it("workers store results too, for jobs with a concurrency or unique key as well", async () => {
    const firm = env.firm();
    const plain = firm.defineJob("plain", async (args: { n: number }) => args.n * 10);
    const keyed = firm.defineJob("keyed", async (args: { n: number }) => `k${args.n}`, {
      concurrency: { key: "k", to: 2 },
      unique: { key: (args) => args.n },
    });
    const ids = [await enqueued(plain.enqueue({ n: 1 })), await enqueued(keyed.enqueue({ n: 2 }))];
    const supervisor = await firm.start({ workers: [{ queues: "*", concurrency: 2, pollingInterval: 20 }] });
    try {
      for (const id of ids)
        await waitFor(async () => (await firm.getJob(id))?.state === "finished", 15_000, "the jobs finished");
    } finally {
      await supervisor.stop();
    }
    expect((await firm.getJob(ids[0]!))?.result).toBe(10);
    expect((await firm.getJob(ids[1]!))?.result).toBe("k2");
  });

  it("a result too large or not storable as JSON fails the attempt with a named error", async () => {
    const firm = env.firm();
    const large = firm.defineJob("large", async () => "x".repeat(MAX_RESULT_BYTES + 1));
    const odd = firm.defineJob("odd", async () => ({ callback: () => 1 }));
    const fits = firm.defineJob("fits", async () => "x".repeat(MAX_RESULT_BYTES - 2));
    const tooLarge = await enqueued(large.enqueue(null));
    const unstorable = await enqueued(odd.enqueue(null));
    const fitting = await enqueued(fits.enqueue(null));
    await firm.drain();
    expect(await firm.getJob(tooLarge)).toMatchObject({ state: "failed", error: { name: "ResultTooLargeError" } });
    expect((await firm.getJob(tooLarge))?.error?.message).toContain(`limited to ${MAX_RESULT_BYTES} bytes`);
    expect(await firm.getJob(unstorable)).toMatchObject({
      state: "failed",
      error: { name: "ResultNotSerializableError" },
    });
    expect((await firm.getJob(fitting))?.state).toBe("finished");
  });

  it("progress is recorded while the job runs (latest wins) and shown on the dashboard's job page", async () => {
    const firm = env.firm();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const job = firm.defineJob("import", async (_args: null, context) => {
      for (let done = 1; done <= 50; done++) context.progress({ done, total: 50 });
      await gate;
      context.progress("wrapping up");
      return "imported";
    });
    const id = await enqueued(job.enqueue(null));
    const supervisor = await firm.start({ workers: [{ queues: "*", concurrency: 1, pollingInterval: 20 }] });
    try {
      await waitFor(
        async () => JSON.stringify((await firm.getJob(id))?.progress) === JSON.stringify({ done: 50, total: 50 }),
        15_000,
        "the latest progress recorded",
      );
      expect((await firm.getJob(id))?.state).toBe("claimed");
      const served = await serveUnderPrefix(createDashboard({ firm, basePath: "/admin" }), "/admin");
      try {
        const page = await (await fetch(`${served.url}/admin/jobs/${id}`)).text();
        expect(page).toContain("Progress");
        expect(page).toMatch(/done.{0,40}50/s);
      } finally {
        await served.close();
      }
      release();
      await waitFor(async () => (await firm.getJob(id))?.state === "finished", 15_000, "the job finished");
    } finally {
      release();
      await supervisor.stop();
    }
    expect(await firm.getJob(id)).toMatchObject({ progress: "wrapping up", result: "imported" });
  });

  it("a progress value that cannot be stored throws to the handler at once", async () => {
    const firm = env.firm();
    const job = firm.defineJob("bad", async (_args: null, context) => {
      context.progress("x".repeat(5000));
    });
    const id = await enqueued(job.enqueue(null));
    await firm.drain();
    expect(await firm.getJob(id)).toMatchObject({ state: "failed", error: { name: "ResultNotSerializableError" } });
  });
});
