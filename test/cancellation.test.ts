import { expect, it } from "vitest";
import { CancelledSignal, ConfigurationError, JobNotFoundError } from "../src/index.js";
import type { JobPolicies } from "../src/definitions/job-policies.js";
import { failClaimedJob, releaseClaims } from "../src/lifecycle/claimed-jobs.js";
import { registerProcess } from "../src/models/process.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { countRows, describeEachDatabaseAtOnce, enqueued, waitFor } from "./support/harness.js";

const WORKER = { queues: "*", concurrency: 1, prefetch: 0, pollingInterval: 20 };

describeEachDatabaseAtOnce("cancellation", (env) => {
  it("a ready job leaves the line, ends cancelled and is kept; a second cancel changes nothing", async () => {
    const firm = env.firm();
    const ran: number[] = [];
    const job = firm.defineJob("work", async (args: { n: number }) => void ran.push(args.n));
    const id = await enqueued(job.enqueue({ n: 1 }));
    await enqueued(job.enqueue({ n: 2 }));
    const heard: unknown[] = [];
    firm.events.on("job.cancelled", (event) => void heard.push(event));
    expect(await firm.jobs.cancel(id)).toBe("cancelled");
    expect(heard).toEqual([{ jobId: id, job: "work", queue: "default" }]);
    const info = await firm.getJob(id);
    expect(info).toMatchObject({ state: "cancelled", attempts: 0 });
    expect(info?.cancelledAt).toBeInstanceOf(Date);
    expect(info?.finishedAt).toBeInstanceOf(Date);
    expect(await firm.drain()).toBe(1);
    expect(ran).toEqual([2]);
    expect(await firm.jobs.cancel(id)).toBe("ended");
    expect(heard).toHaveLength(1);
    expect((await firm.inspect.jobs({ state: "cancelled" })).jobs.map((listed) => listed.id)).toEqual([id]);
    expect((await firm.inspect.jobs({ state: "finished" })).jobs.map((listed) => listed.id)).not.toContain(id);
  });

  it("scheduled and blocked jobs are cancelled; a cancelled ready job's slot goes to the next blocked job", async () => {
    const firm = env.firm();
    const limited = firm.defineJob("limited", async () => {}, { concurrency: { key: "k" } });
    const later = await enqueued(limited.enqueue(null, { wait: "1h" }));
    const first = await enqueued(limited.enqueue(null));
    const second = await enqueued(limited.enqueue(null));
    const third = await enqueued(limited.enqueue(null));
    expect((await firm.getJob(second))?.state).toBe("blocked");
    expect(await firm.jobs.cancel(later)).toBe("cancelled");
    expect(await firm.jobs.cancel(third)).toBe("cancelled");
    expect(await firm.jobs.cancel(first)).toBe("cancelled");
    expect((await firm.getJob(second))?.state).toBe("ready");
    expect(await countRows(await env.db(), "firm_queue_blocked_executions")).toBe(0);
    expect(await countRows(await env.db(), "firm_queue_scheduled_executions")).toBe(0);
  });

  it("unknown ids are a JobNotFoundError, bad ones a ConfigurationError", async () => {
    const firm = env.firm();
    await firm.migrate();
    await expect(firm.jobs.cancel(123456)).rejects.toThrow(JobNotFoundError);
    await expect(firm.jobs.cancel(-1)).rejects.toThrow(ConfigurationError);
    await expect(firm.jobs.cancelAll({})).rejects.toThrow(ConfigurationError);
  });

  it("a running job's signal fires, and it ends cancelled (not retried) whatever the handler does", async () => {
    const firm = env.firm();
    const reasons: unknown[] = [];
    const job = firm.defineJob(
      "listens",
      async (args: { after: "return" | "throw" }, context) => {
        await new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve()));
        reasons.push(context.signal.reason);
        if (args.after === "throw") throw new Error("stopped");
      },
      { retry: { attempts: 5, backoff: 0 } },
    );
    const returns = await enqueued(job.enqueue({ after: "return" }));
    const throws = await enqueued(job.enqueue({ after: "throw" }));
    const heard: Array<{ jobId: number }> = [];
    firm.events.on("job.cancelled", (event) => void heard.push(event));
    const supervisor = await firm.start({ workers: [{ ...WORKER, concurrency: 2 }] });
    try {
      for (const id of [returns, throws])
        await waitFor(async () => (await firm.getJob(id))?.state === "claimed", 15_000, "the jobs running");
      expect(await firm.jobs.cancel(returns)).toBe("cancelling");
      expect(await firm.jobs.cancel(throws)).toBe("cancelling");
      expect((await firm.getJob(returns))?.state).toBe("claimed");
      for (const id of [returns, throws])
        await waitFor(async () => (await firm.getJob(id))?.state === "cancelled", 15_000, "the jobs cancelled");
      expect(reasons).toHaveLength(2);
      for (const reason of reasons) expect(reason).toBeInstanceOf(CancelledSignal);
      expect(await firm.getJob(throws)).toMatchObject({ state: "cancelled", attempts: 1 });
      // The worker tells of each once it has recorded the cancel; the cancelling call told of none.
      await waitFor(() => heard.length === 2, 5_000, "both job.cancelled events");
      expect([...heard].sort((a, b) => a.jobId - b.jobId)).toEqual(
        [returns, throws].map((jobId) =>
          expect.objectContaining({ jobId, job: "listens", attempt: 1, started: true, processId: expect.any(Number) }),
        ),
      );
      expect(await countRows(await env.db(), "firm_queue_claimed_executions")).toBe(0);
    } finally {
      await supervisor.stop();
    }
  });

  it("a running job's concurrency slot and unique key are given back when it is cancelled", async () => {
    const firm = env.firm();
    const ran: number[] = [];
    const job = firm.defineJob(
      "limited",
      async (args: { n: number }, context) => {
        ran.push(args.n);
        if (args.n === 1) await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      },
      { concurrency: { key: "k" }, unique: { key: (args) => `n${args.n}`, mode: "running" } },
    );
    const first = await enqueued(job.enqueue({ n: 1 }, { key: "held" }));
    const next = await enqueued(job.enqueue({ n: 2 }));
    expect((await firm.getJob(next))?.state).toBe("blocked");
    const supervisor = await firm.start({ workers: [{ ...WORKER, concurrency: 2 }] });
    try {
      await waitFor(async () => (await firm.getJob(first))?.state === "claimed", 15_000, "the first job running");
      expect((await job.enqueue({ n: 3 }, { key: "held" })).status).toBe("duplicate");
      expect(await firm.jobs.cancel(first)).toBe("cancelling");
      await waitFor(async () => (await firm.getJob(next))?.state === "finished", 15_000, "the blocked job ran");
      expect((await firm.getJob(first))?.state).toBe("cancelled");
      expect(await countRows(await env.db(), "firm_queue_job_keys")).toBe(0);
      expect(ran).toEqual([1, 2]);
    } finally {
      await supervisor.stop();
    }
  });

  it("a claimed job still in the worker's buffer never starts", async () => {
    const firm = env.firm();
    const started: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const job = firm.defineJob("work", async (args: { n: number }) => {
      started.push(args.n);
      if (args.n === 1) await gate;
    });
    const first = await enqueued(job.enqueue({ n: 1 }));
    const buffered = await enqueued(job.enqueue({ n: 2 }));
    const heard: unknown[] = [];
    firm.events.on("job.cancelled", (event) => void heard.push(event));
    const supervisor = await firm.start({ workers: [{ ...WORKER, prefetch: 4 }] });
    try {
      await waitFor(async () => (await firm.getJob(buffered))?.state === "claimed", 15_000, "both jobs claimed");
      // The first job's handler begins once its claim is marked started, a moment after the claim.
      await waitFor(async () => started.length > 0, 15_000, "the first job started");
      expect(started).toEqual([1]);
      expect(await firm.jobs.cancel(buffered)).toBe("cancelling");
      await waitFor(
        async () => (await firm.getJob(buffered))?.state === "cancelled",
        15_000,
        "the buffered job cancelled",
      );
      release();
      await waitFor(async () => (await firm.getJob(first))?.state === "finished", 15_000, "the first job finished");
      expect(started).toEqual([1]);
      expect(await firm.getJob(buffered)).toMatchObject({ attempts: 0 });
      expect(heard).toEqual([expect.objectContaining({ jobId: buffered, job: "work", started: false })]);
    } finally {
      release();
      await supervisor.stop();
    }
  });

  it("cancelAll by queue, name and key counts what it cancelled", async () => {
    const firm = env.firm();
    const a = firm.defineJob("a", async () => {});
    const b = firm.defineJob("b", async () => {});
    await a.enqueueAll([null, null, null], { queue: "q1" });
    await b.enqueue(null, { queue: "q1" });
    await b.enqueue(null, { queue: "q2", key: "x" });
    await b.enqueue(null, { queue: "q2", wait: "1h" });
    expect(await firm.jobs.cancelAll({ queue: "q1", name: "a", batchSize: 2 })).toBe(3);
    expect(await firm.jobs.cancelAll({ key: "x" })).toBe(1);
    expect(await firm.jobs.cancelAll({ name: "b" })).toBe(2);
    expect(await firm.jobs.cancelAll({ name: "b" })).toBe(0);
    expect(await countRows(await env.db(), "firm_queue_ready_executions")).toBe(0);
  });
});

describeEachDatabaseAtOnce("cancellation and crash recovery", (env) => {
  it("a running job whose cancel was requested is recorded cancelled when its attempt fails, not retried", async () => {
    const firm = env.firm();
    firm.defineJob("work", async () => {}, { retry: { attempts: 5, backoff: 0 } });
    const id = await enqueued(firm.enqueue("work", null));
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "w" }, new Date());
    const [claimed] = await claimJobs(database, new QueueSelector("*"), 1, processId);
    expect(Number(claimed!.id)).toBe(id);
    expect(await firm.jobs.cancel(id)).toBe("cancelling");
    // Its process died: crash recovery records the claim as a failed attempt.
    const policies = (firm as unknown as { policies: JobPolicies }).policies;
    const outcome = await failClaimedJob(database, policies, id, processId, new Error("process died"));
    expect(outcome?.cancelled).toBe(true);
    expect(await firm.getJob(id)).toMatchObject({ state: "cancelled", attempts: 1 });
    expect(await countRows(await env.db(), "firm_queue_scheduled_executions")).toBe(0);
  });

  it("a claim put back in line on shutdown ends cancelled if its cancel was requested", async () => {
    const firm = env.firm();
    firm.defineJob("work", async () => {});
    const id = await enqueued(firm.enqueue("work", null));
    const other = await enqueued(firm.enqueue("work", null));
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "w" }, new Date());
    await claimJobs(database, new QueueSelector("*"), 2, processId);
    expect(await firm.jobs.cancel(id)).toBe("cancelling");
    const policies = (firm as unknown as { policies: JobPolicies }).policies;
    expect((await releaseClaims(database, policies, processId, [id, other])).sort()).toEqual([id, other].sort());
    expect(await firm.getJob(id)).toMatchObject({ state: "cancelled", attempts: 0 });
    expect((await firm.getJob(other))?.state).toBe("ready");
  });
});
