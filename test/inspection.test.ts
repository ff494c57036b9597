import { expect, test } from "vitest";
import { ConfigurationError, InvalidCursorError, RecurringTaskNotFoundError } from "../src/index.js";
import { describeEachDatabase, enqueued, waitFor } from "./support/harness.js";

describeEachDatabase("firm.inspect", (env) => {
  test("lists jobs by state, newest first, page by page with a keyset cursor, and filters by queue and name", async () => {
    const firm = env.firm();
    const email = firm.defineJob("email", async () => {});
    const report = firm.defineJob("report", async () => {});
    const ids: number[] = [];
    for (let index = 0; index < 5; index += 1)
      ids.push((await email.enqueue({ index }, { queue: index % 2 === 0 ? "mail" : "other" })).id);
    const reportId = (await report.enqueue({ big: 10n, at: new Date("2026-01-02T03:04:05Z") })).id;
    await email.enqueue({ later: true }, { wait: "1h" });

    const first = await firm.inspect.jobs({ state: "ready", limit: 2 });
    expect(first.jobs.map((job) => job.id)).toEqual([reportId, ids[4]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await firm.inspect.jobs({ state: "ready", limit: 2, cursor: first.nextCursor });
    expect(second.jobs.map((job) => job.id)).toEqual([ids[3], ids[2]]);
    const third = await firm.inspect.jobs({ state: "ready", limit: 2, cursor: second.nextCursor });
    expect(third.jobs.map((job) => job.id)).toEqual([ids[1], ids[0]]);
    expect(third.nextCursor).toBeNull();

    expect((await firm.inspect.jobs({ state: "ready", queue: "mail" })).jobs.map((job) => job.id)).toEqual([
      ids[4],
      ids[2],
      ids[0],
    ]);
    const reports = await firm.inspect.jobs({ state: "ready", name: "report" });
    expect(reports.jobs).toHaveLength(1);
    expect(reports.jobs[0]).toMatchObject({
      id: reportId,
      name: "report",
      queue: "default",
      state: "ready",
      arguments: { big: 10n, at: new Date("2026-01-02T03:04:05Z") },
    });
    const scheduled = await firm.inspect.jobs({ state: "scheduled" });
    expect(scheduled.jobs).toHaveLength(1);
    expect(scheduled.jobs[0]!.since.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect((await firm.inspect.jobs({ state: "scheduled", to: new Date(Date.now() + 30 * 60_000) })).jobs).toHaveLength(
      0,
    );
    expect((await firm.inspect.jobs({ state: "ready", from: new Date(Date.now() + 60_000) })).jobs).toHaveLength(0);
  });

  test("pages through finished and failed jobs; bad options and cursors are refused with named errors", async () => {
    const firm = env.firm();
    const ok = firm.defineJob("ok", async () => {});
    const bad = firm.defineJob("bad", async () => {
      throw new TypeError("<b>no</b>");
    });
    const done: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      done.push((await ok.enqueue({ index })).id);
      await firm.drain();
    }
    const failedId = (await bad.enqueue({})).id;
    await firm.drain();

    const page1 = await firm.inspect.jobs({ state: "finished", limit: 2 });
    expect(page1.jobs.map((job) => job.id)).toEqual([done[2], done[1]]);
    const page2 = await firm.inspect.jobs({ state: "finished", limit: 2, cursor: page1.nextCursor });
    expect(page2.jobs.map((job) => job.id)).toEqual([done[0]]);
    expect(page2.nextCursor).toBeNull();
    expect(page1.jobs[0]!.finishedAt).toEqual(page1.jobs[0]!.since);

    const failed = await firm.inspect.jobs({ state: "failed" });
    expect(failed.jobs).toEqual([
      expect.objectContaining({
        id: failedId,
        state: "failed",
        error: expect.objectContaining({ name: "TypeError", message: "<b>no</b>" }),
      }),
    ]);

    expect(await firm.inspect.count({ state: "finished" })).toEqual({ count: 3, exact: true });
    expect(await firm.inspect.count({ state: "finished", upTo: 2 })).toEqual({ count: 2, exact: false });
    expect(await firm.inspect.count({ state: "finished", name: "bad" })).toEqual({ count: 0, exact: true });
    expect(await firm.inspect.count({ state: "failed", name: "bad", queue: "default" })).toEqual({
      count: 1,
      exact: true,
    });
    expect(await firm.inspect.count({ state: "failed", queue: "other" })).toEqual({ count: 0, exact: true });
    expect(await firm.inspect.count({ state: "failed", from: new Date(Date.now() + 60_000) })).toEqual({
      count: 0,
      exact: true,
    });
    await expect(firm.inspect.count({ state: "failed", upTo: 0 })).rejects.toThrow(ConfigurationError);
    await expect(firm.inspect.jobs({ state: "finished", cursor: "nonsense" })).rejects.toThrow(InvalidCursorError);
    await expect(firm.inspect.jobs({ state: "done" as never })).rejects.toThrow(ConfigurationError);
    await expect(firm.inspect.jobs({ state: "ready", limit: 501 })).rejects.toThrow(/at most 500/);
    await expect(firm.inspect.jobs({ state: "ready", colour: "red" } as never)).rejects.toThrow(
      /Unknown inspect.jobs option "colour"/,
    );
    await expect(firm.inspect.job(0)).rejects.toThrow(ConfigurationError);
  });

  test("counts jobs by queue and state, with latency and pauses", async () => {
    const firm = env.firm();
    const work = firm.defineJob("work", async () => {});
    const fail = firm.defineJob("fail", async () => {
      throw new Error("x");
    });
    await work.enqueue({}, { queue: "a" });
    await work.enqueue({}, { queue: "a" });
    await work.enqueue({}, { queue: "b", wait: "1h" });
    await fail.enqueue({}, { queue: "b" });
    await firm.drain({ queues: "b" });
    const limited = firm.defineJob("limited", async () => {}, { queue: "b", rateLimit: { limit: 1, period: "1s" } });
    await limited.enqueue(null);
    await firm.queues.pause("c");
    const counts = await firm.inspect.queues();
    expect(counts).toEqual([
      {
        name: "a",
        ready: 2,
        scheduled: 0,
        blocked: 0,
        throttled: 0,
        claimed: 0,
        failed: 0,
        latency: expect.any(Number),
        paused: false,
      },
      { name: "b", ready: 0, scheduled: 1, blocked: 0, throttled: 1, claimed: 0, failed: 1, latency: 0, paused: false },
      { name: "c", ready: 0, scheduled: 0, blocked: 0, throttled: 0, claimed: 0, failed: 0, latency: 0, paused: true },
    ]);
    expect(counts[0]!.latency).toBeGreaterThanOrEqual(0);
    expect(await firm.inspect.count({ state: "ready", queue: "a" })).toEqual({ count: 2, exact: true });
    expect(await firm.inspect.count({ state: "scheduled", queue: "a" })).toEqual({ count: 0, exact: true });
    expect(await firm.inspect.count({ state: "scheduled", name: "work" })).toEqual({ count: 1, exact: true });
  });

  test("shows a running job under its process and in its timeline; semaphores list holders and blocked jobs", async () => {
    const firm = env.firm();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started: number[] = [];
    const slow = firm.defineJob(
      "slow",
      async (_args: { account: string }, context) => {
        started.push(context.jobId);
        await gate;
      },
      { concurrency: { key: (args) => args.account, to: 1 } },
    );
    const running = await enqueued(slow.enqueue({ account: "A" }));
    const waiting = await enqueued(slow.enqueue({ account: "A" }));
    const supervisor = await firm.start({ workers: [{ pollingInterval: 20, concurrency: 2 }], dispatchers: [] });
    try {
      await waitFor(() => started.includes(running), 15_000, "the first job to start");
      const processes = await firm.inspect.processes();
      const worker = processes.find((process) => process.kind === "Worker")!;
      expect(processes[0]!.kind).toBe("Supervisor");
      expect(worker.runningJobs.map((job) => job.id)).toEqual([running]);
      expect(worker.stale).toBe(false);
      expect(worker.supervisorId).toBe(processes[0]!.id);

      const detail = await firm.inspect.job(running);
      expect(detail).toMatchObject({ id: running, state: "claimed", claimedBy: { id: worker.id, kind: "Worker" } });
      expect(detail!.timeline.map((event) => event.kind)).toEqual(["enqueued", "claimed"]);

      const blocked = await firm.inspect.job(waiting);
      expect(blocked).toMatchObject({ state: "blocked", blockedUntil: expect.any(Date) });
      expect(blocked!.timeline.map((event) => event.kind)).toEqual(["enqueued", "blocked"]);

      const semaphores = await firm.inspect.semaphores();
      expect(semaphores).toEqual([
        expect.objectContaining({
          key: "slow/A",
          limit: 1,
          available: 0,
          inUse: 1,
          blockedCount: 1,
          running: [expect.objectContaining({ id: running, state: "claimed", processId: worker.id })],
          blocked: [expect.objectContaining({ id: waiting, state: "blocked" })],
        }),
      ]);
      // Another instance without the definition does not know the limit.
      expect((await env.firm().inspect.semaphores())[0]).toMatchObject({ limit: null, inUse: null, available: 0 });
      expect(await firm.inspect.job(123456789)).toBeNull();
    } finally {
      release();
      await supervisor.stop();
    }
  });

  test("recurring tasks show their latest runs; runNow enqueues one outside the schedule; throughput counts per minute", async () => {
    const firm = env.firm();
    firm.defineJob("report", async () => {});
    await firm.recurring.schedule("nightly", {
      job: "report",
      schedule: "0 3 * * *",
      args: { depth: 2 },
      queue: "reports",
    });
    const jobId = await firm.recurring.runNow("nightly");
    expect(jobId).toEqual(expect.any(Number));
    expect(await firm.getJob(jobId!)).toMatchObject({
      name: "report",
      queue: "reports",
      arguments: { depth: 2 },
      state: "ready",
    });
    let [task] = await firm.inspect.recurringTasks();
    expect(task).toMatchObject({ key: "nightly", static: false, lastRunAt: null, runs: [{ jobId, state: "ready" }] });
    await firm.drain();
    [task] = await firm.inspect.recurringTasks();
    expect(task!.runs).toEqual([expect.objectContaining({ jobId, state: "finished" })]);
    expect((await firm.inspect.job(jobId!))!.recurring).toMatchObject({ taskKey: "nightly" });
    await expect(firm.recurring.runNow("missing")).rejects.toThrow(RecurringTaskNotFoundError);

    const buckets = await firm.inspect.throughput({ buckets: 5 });
    expect(buckets).toHaveLength(5);
    expect(buckets.at(-1)!.start.getTime()).toBeLessThanOrEqual(Date.now());
    expect(buckets.reduce((sum, bucket) => sum + bucket.finished, 0)).toBe(1);
    expect(buckets.reduce((sum, bucket) => sum + bucket.failed, 0)).toBe(0);
    await expect(firm.inspect.throughput({ bucketMs: 10 })).rejects.toThrow(ConfigurationError);
  });
});
