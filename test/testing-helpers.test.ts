import { AssertionError } from "node:assert";
import { describe, expect, it } from "vitest";
import { ConfigurationError, FirmQueue, silentLogger } from "../src/index.js";
import { createTestQueue, matches, performJob } from "../src/testing/index.js";
import { describeEachDatabase } from "./support/harness.js";

/** The error a promise rejects with, or a failure when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => expect.unreachable("expected a rejection"),
    (error: unknown) => error as Error,
  );
}

describeEachDatabase("firm-queue/testing on the application's database", (env) => {
  function app() {
    const firm = env.firm();
    const ran: string[] = [];
    const welcome = firm.defineJob("welcome", async ({ userId }: { userId: number; locale?: string }) => {
      ran.push(`welcome ${userId}`);
      await followUp.enqueue({ userId }, { wait: "1d" });
      await audit.enqueue({ event: `welcomed ${userId}` });
    });
    const followUp = firm.defineJob("follow-up", async ({ userId }: { userId: number }) => {
      ran.push(`follow-up ${userId}`);
    });
    const audit = firm.defineJob(
      "audit",
      async ({ event }: { event: string }) => {
        ran.push(`audit ${event}`);
      },
      { queue: "audit" },
    );
    let failures = 1;
    const flaky = firm.defineJob(
      "flaky",
      async () => {
        ran.push("flaky");
        if (failures-- > 0) throw new Error("not yet");
      },
      { retry: { attempts: 2, backoff: "10m" } },
    );
    firm.defineJob("digest", async () => void ran.push("digest"));
    return { firm, ran, welcome, followUp, audit, flaky };
  }

  it("enqueued, assertEnqueued and refuteEnqueued see what the code enqueued, args matched by their keys", async () => {
    const { firm, welcome, audit } = app();
    const testing = await createTestQueue(firm);
    await welcome.enqueue({ userId: 7, locale: "fr" });
    await audit.enqueue({ event: "signup" }, { wait: "5m" });
    expect((await testing.enqueued({ name: "welcome" })).map((job) => job.arguments)).toEqual([
      { userId: 7, locale: "fr" },
    ]);
    expect(await testing.enqueued({ args: { userId: 7 } })).toHaveLength(1);
    expect(await testing.enqueued({ queue: "audit" })).toMatchObject([{ name: "audit", state: "scheduled" }]);
    await testing.assertEnqueued({ name: "welcome", args: { userId: 7 } });
    await testing.assertEnqueued({ name: "audit" }, { count: 1 });
    await testing.refuteEnqueued({ name: "welcome", args: { userId: 8 } });

    const missing = await rejection(testing.assertEnqueued({ name: "welcome", args: { userId: 8 } }));
    expect(missing).toBeInstanceOf(AssertionError);
    expect(missing.message).toMatch(
      /^Expected a job matching \{ name: 'welcome', args: \{ userId: 8 \} \} to be enqueued, found 0\. Enqueued:\n/,
    );
    expect(missing.message).toMatch(/#\d+ welcome on "default", ready: \{ userId: 7, locale: 'fr' \}/);
    expect(missing.message).toMatch(/#\d+ audit on "audit", scheduled for \d{4}-.*: \{ event: 'signup' \}/);

    const present = await rejection(testing.refuteEnqueued({ name: "welcome" }));
    expect(present).toBeInstanceOf(AssertionError);
    expect(present.message).toMatch(
      /^Expected no job matching \{ name: 'welcome' \} to be enqueued, found 1:\n {2}#\d+ welcome/,
    );
    await expect(testing.enqueued({ nme: "x" } as never)).rejects.toBeInstanceOf(ConfigurationError);
  });

  it("runAll runs due jobs and the jobs they enqueue; advance makes scheduled jobs and retries due", async () => {
    const { firm, ran, welcome, flaky } = app();
    const testing = await createTestQueue(firm);
    await welcome.enqueue({ userId: 1 });
    await flaky.enqueue(null);
    expect(await testing.runAll()).toBe(3);
    expect(ran).toEqual(["welcome 1", "flaky", "audit welcomed 1"]);
    // The follow-up waits a day, the retry ten minutes.
    await testing.assertEnqueued({ name: "follow-up", args: { userId: 1 } });
    await testing.assertEnqueued({ name: "flaky" });
    testing.advance("10m");
    expect(await testing.runAll()).toBe(1);
    expect(ran.at(-1)).toBe("flaky");
    await testing.refuteEnqueued({ name: "flaky" });
    await testing.assertEnqueued({ name: "follow-up" });
    testing.advance("1d");
    expect(await testing.runAll()).toBe(1);
    expect(ran.at(-1)).toBe("follow-up 1");
    expect(await testing.enqueued()).toEqual([]);
    expect(() => testing.advance(0)).toThrow(ConfigurationError);
  });

  it("advance makes recurring tasks' ticks due; runAll enqueues and runs them", async () => {
    const { firm, ran } = app();
    const testing = await createTestQueue(firm, { recurring: { digest: { schedule: "0 * * * *", job: "digest" } } });
    expect(await testing.runAll()).toBe(0);
    testing.advance("1h");
    expect(await testing.runAll()).toBe(1);
    expect(ran).toEqual(["digest"]);
    expect(await testing.runAll()).toBe(0);
    testing.advance("1h");
    expect(await testing.runAll()).toBe(1);
    expect(ran).toEqual(["digest", "digest"]);
  });

  it("runAll stops a job that enqueues itself forever at its limit", async () => {
    const firm = env.firm();
    const again = firm.defineJob("again", async () => void (await again.enqueue(null)));
    const testing = await createTestQueue(firm);
    await again.enqueue(null);
    await expect(testing.runAll({ limit: 20 })).rejects.toThrow(/more than 20 jobs/);
  });
});

describe("firm-queue/testing on in-memory SQLite", () => {
  it("createTestQueue() with no FirmQueue makes one on an in-memory database", async () => {
    const testing = await createTestQueue();
    try {
      const sent: number[] = [];
      const send = testing.firm.defineJob("send", async ({ n }: { n: number }) => void sent.push(n));
      await send.enqueue({ n: 1 });
      await testing.assertEnqueued({ name: "send", args: { n: 1 } });
      expect(await testing.runAll()).toBe(1);
      expect(sent).toEqual([1]);
      expect(testing.firm.options.databaseUrl).toContain(":memory:");
    } finally {
      await testing.close();
    }
  });
});

describe("performJob", () => {
  const firm = new FirmQueue({ databaseUrl: "sqlite::memory:", logger: silentLogger });
  const lines: string[] = [];
  firm.use(async (context, next) => {
    lines.push(`around ${context.name}`);
    return next();
  });
  const resize = firm.defineJob(
    "resize",
    async ({ width, at }: { width: number; at: Date }, context) => {
      context.progress({ done: 1, total: 2 });
      context.logger.info("resizing", { width });
      context.progress({ done: 2, total: 2 });
      if (context.signal.aborted) throw new Error("stopped");
      return { width: width * 2, at, attempt: context.attempt, queue: context.queue, jobId: context.jobId };
    },
    { queue: "images" },
  );

  it("runs the handler with a real context, middleware and the JSON round trip, without a database", async () => {
    const logged: unknown[] = [];
    const logger = {
      ...silentLogger,
      info: (message: string, fields?: object) => void logged.push({ message, ...fields }),
    };
    const at = new Date("2026-01-02T03:04:05Z");
    const performed = await performJob(resize, { width: 10, at }, { attempt: 3, jobId: 42, logger });
    expect(performed).toEqual({
      result: { width: 20, at, attempt: 3, queue: "images", jobId: 42 },
      progress: [
        { done: 1, total: 2 },
        { done: 2, total: 2 },
      ],
    });
    expect(logged).toEqual([{ message: "resizing", width: 10, jobId: 42, job: "resize", queue: "images", attempt: 3 }]);
    expect(lines).toEqual(["around resize"]);
  });

  it("passes the signal and rejects with what the handler threw; bad arguments fail as at enqueue", async () => {
    const at = new Date();
    await expect(performJob(resize, { width: 1, at }, { signal: AbortSignal.abort() })).rejects.toThrow("stopped");
    await expect(performJob(resize, { width: 1, at: new Map() as never })).rejects.toMatchObject({
      name: "SerializationError",
    });
    await expect(performJob(resize, { width: 1, at }, { atempt: 2 } as never)).rejects.toBeInstanceOf(
      ConfigurationError,
    );
    const declared = firm.declareJob("elsewhere");
    await expect(performJob(declared, null)).rejects.toMatchObject({ name: "JobNotImplementedError" });
  });

  it("a result that cannot be stored fails as it would in a worker", async () => {
    const bad = firm.defineJob("bad-result", async () => new Map());
    await expect(performJob(bad, null)).rejects.toMatchObject({ name: "ResultNotSerializableError" });
  });
});

describe("argument matching", () => {
  it("matches equal values, object subsets, arrays item by item and dates by time", () => {
    expect(matches({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2 } })).toBe(true);
    expect(matches({ a: 1 }, { a: 2 })).toBe(false);
    expect(matches({ a: 1 }, { b: undefined })).toBe(false);
    expect(matches([1, { x: 1, y: 2 }], [1, { x: 1 }])).toBe(true);
    expect(matches([1, 2], [1])).toBe(false);
    expect(matches(new Date(5), new Date(5))).toBe(true);
    expect(matches(null, {})).toBe(false);
    expect(matches(2n, 2n)).toBe(true);
  });
});
