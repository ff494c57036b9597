import { expect, it } from "vitest";
import type { ErrorContext, FirmQueue, JobEventMap, JobEventName } from "../src/index.js";
import { describeEachDatabase, enqueued, waitFor } from "./support/harness.js";
import { fastForward } from "./support/database-clock.js";

class FlakyError extends Error {
  override name = "FlakyError";
}

/** Every event of `names` heard from `firm`, in order, as [name, payload]. */
function record(firm: FirmQueue, names: readonly JobEventName[]): [JobEventName, Record<string, unknown>][] {
  const heard: [JobEventName, Record<string, unknown>][] = [];
  for (const name of names) firm.events.on(name, (event) => void heard.push([name, { ...event }]));
  return heard;
}

describeEachDatabase("job lifecycle events", (env) => {
  it("enqueue and enqueueAll tell job.enqueued once per job, in the enqueuing process", async () => {
    const firm = env.firm();
    const heard = record(firm, ["job.enqueued"]);
    const job = firm.defineJob("greet", async () => undefined, { queue: "mail", priority: 3 });
    const at = new Date(Date.now() + 3_600_000);
    const one = (await job.enqueue({ to: "a" }, { at })).id;
    const [two, three] = (await job.enqueueAll([{ to: "b" }, { to: "c" }])).map((result) => result.id);
    const viaName = (await firm.enqueue("greet", { to: "d" }, { queue: "urgent" })).id;
    expect(heard.map(([, event]) => event.jobId)).toEqual([one, two, three, viaName]);
    expect(heard[0]).toEqual([
      "job.enqueued",
      { jobId: one, job: "greet", queue: "mail", priority: 3, scheduledAt: at },
    ]);
    expect(heard[3]![1]).toMatchObject({ job: "greet", queue: "urgent" });
  });

  it("a job that runs tells claimed, started and finished, with its due time and duration", async () => {
    const firm = env.firm();
    const heard = record(firm, ["job.claimed", "job.started", "job.finished"]);
    const job = firm.defineJob("work", async () => new Promise((resolve) => setTimeout(resolve, 30)));
    const id = (await job.enqueue(null)).id;
    const scheduledAt = (await firm.getJob(id))!.scheduledAt;
    expect(await firm.drain()).toBe(1);
    expect(heard.map(([name]) => name)).toEqual(["job.claimed", "job.started", "job.finished"]);
    const [, claimed] = heard[0]!;
    const [, started] = heard[1]!;
    const [, finished] = heard[2]!;
    expect(claimed).toEqual({ jobId: id, job: "work", queue: "default", attempt: 1, processId: expect.any(Number) });
    expect(started).toMatchObject({ jobId: id, job: "work", queue: "default", attempt: 1, dueAt: scheduledAt });
    expect(started.processId).toBe(claimed.processId);
    expect((started.startedAt as Date).getTime()).toBeGreaterThanOrEqual((scheduledAt as Date).getTime());
    expect(finished).toMatchObject({ jobId: id, dueAt: scheduledAt, startedAt: started.startedAt });
    expect(finished.durationMs).toBeGreaterThanOrEqual(25);
  });

  it("failures tell job.retrying with the delay, then job.failed when attempts run out", async () => {
    const firm = env.firm();
    const heard = record(firm, ["job.retrying", "job.failed", "job.finished"]);
    const job = firm.defineJob(
      "doomed",
      async (_args: null, context) => {
        throw new FlakyError(`attempt ${context.attempt}`);
      },
      { retry: { attempts: 2, backoff: "1h" } },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    await fastForward(env, firm);
    await firm.drain();
    expect(heard.map(([name]) => name)).toEqual(["job.retrying", "job.failed"]);
    const [, retrying] = heard[0]!;
    expect(retrying).toMatchObject({ jobId: id, job: "doomed", attempt: 1, maxAttempts: 2, delayMs: 3_600_000 });
    expect(retrying.error).toMatchObject({ name: "FlakyError", message: "attempt 1" });
    expect(retrying.retryAt).toBeInstanceOf(Date);
    expect(heard[1]![1]).toMatchObject({ jobId: id, attempt: 2, maxAttempts: 2, reason: "no attempts left" });
    expect((await firm.getJob(id))!.state).toBe("failed");
  });

  it("abandonOn tells job.abandoned", async () => {
    const firm = env.firm();
    const heard = record(firm, ["job.abandoned", "job.failed", "job.retrying"]);
    const job = firm.defineJob(
      "obsolete",
      async () => {
        throw new FlakyError("gone");
      },
      { retry: { attempts: 5, abandonOn: (error) => error instanceof FlakyError } },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(heard).toEqual([
      [
        "job.abandoned",
        expect.objectContaining({
          jobId: id,
          job: "obsolete",
          attempt: 1,
          error: expect.any(FlakyError),
          durationMs: expect.any(Number),
        }),
      ],
    ]);
  });

  it("a concurrency limit tells job.blocked, then job.unblocked when a finishing job frees the slot", async () => {
    const firm = env.firm();
    const heard = record(firm, ["job.blocked", "job.unblocked"]);
    const job = firm.defineJob("serial", async () => undefined, {
      concurrency: { key: (args: { account: string }) => args.account, to: 1, duration: "5m" },
    });
    await enqueued(job.enqueue({ account: "x" }));
    const second = await enqueued(job.enqueue({ account: "x" }));
    expect(heard).toEqual([
      ["job.blocked", { jobId: second, job: "serial", queue: "default", concurrencyKey: "serial/x" }],
    ]);
    expect(await firm.drain()).toBe(2);
    expect(heard[1]).toEqual([
      "job.unblocked",
      { jobId: second, job: "serial", queue: "default", concurrencyKey: "serial/x" },
    ]);
    expect(heard).toHaveLength(2);
  });

  it("a job dropped on a concurrency conflict tells job.dropped, not job.enqueued", async () => {
    const firm = env.firm();
    const heard = record(firm, ["job.enqueued", "job.dropped"]);
    const job = firm.defineJob("once", async () => undefined, {
      concurrency: { key: () => "only", to: 1, duration: "5m", onConflict: "drop" },
    });
    const [first, second] = (await job.enqueueAll([null, null])).map((result) => result.id);
    expect(first).not.toBeNull();
    expect(second).toBeNull();
    expect(heard.map(([name]) => name)).toEqual(["job.enqueued", "job.dropped"]);
    expect(heard[1]![1]).toMatchObject({ job: "once", queue: "default" });
    expect(heard[1]![1].jobId).not.toBe(first);
  });

  it("a timeout tells job.timed_out, then the failure's outcome", async () => {
    const firm = env.firm();
    const heard = record(firm, ["job.timed_out", "job.failed"]);
    const job = firm.defineJob(
      "slow",
      async (_args: null, context) =>
        new Promise((_, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason))),
      { timeout: 50, retry: { attempts: 1 } },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(heard.map(([name]) => name)).toEqual(["job.timed_out", "job.failed"]);
    expect(heard[0]![1]).toMatchObject({ jobId: id, job: "slow", attempt: 1, timeoutMs: 50 });
  });

  it("shutdown tells job.released for the running job and for claimed jobs that never started", async () => {
    const firm = env.firm();
    const heard = record(firm, ["job.started", "job.released"]);
    const job = firm.defineJob("patient", async (_args: { n: number }, context) => {
      await new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve()));
      throw context.signal.reason;
    });
    const ids = (await job.enqueueAll([{ n: 1 }, { n: 2 }, { n: 3 }])).map((result) => result.id);
    const supervisor = await firm.start({
      workers: [{ concurrency: 1, prefetch: 2, pollingInterval: 50 }],
      dispatchers: [],
      shutdownTimeout: "20s",
    });
    await waitFor(() => heard.some(([name]) => name === "job.started"), 20_000, "a job to start");
    await supervisor.stop();
    const released = heard.filter(([name]) => name === "job.released").map(([, event]) => event);
    const startedId = heard.find(([name]) => name === "job.started")![1].jobId;
    expect(released.map((event) => event.jobId).sort()).toEqual([...ids].sort());
    for (const event of released) expect(event.started).toBe(event.jobId === startedId);
    for (const id of ids) expect((await firm.getJob(id!))!.state).toBe("ready");
  });

  it("a listener that throws or rejects breaks nothing: the job finishes and onError hears of it", async () => {
    const reported: [unknown, ErrorContext][] = [];
    const firm = env.firm({ hooks: { onError: (error, context) => void reported.push([error, context]) } });
    firm.events.on("job.started", () => {
      throw new Error("sync listener bug");
    });
    firm.events.on("job.finished", async () => {
      throw new Error("async listener bug");
    });
    const job = firm.defineJob("sturdy", async () => undefined);
    const id = (await job.enqueue(null)).id;
    expect(await firm.drain()).toBe(1);
    expect((await firm.getJob(id))!.state).toBe("finished");
    await waitFor(() => reported.length === 2, 5_000, "both listener errors to be reported");
    expect(reported.map(([error, context]) => [(error as Error).message, context.where])).toEqual([
      ["sync listener bug", "job.started listener"],
      ["async listener bug", "job.finished listener"],
    ]);
  });

  it("every payload type is one of the event map's (compile-time check of the exported map)", () => {
    const payload: JobEventMap["job.finished"] = {
      jobId: 1,
      job: "a",
      queue: "q",
      attempt: 1,
      processId: 2,
      dueAt: new Date(0),
      startedAt: new Date(1),
      durationMs: 3,
    };
    expect(payload.startedAt.getTime() - payload.dueAt.getTime()).toBe(1);
  });
});
