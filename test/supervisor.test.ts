import { expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";

describeEachDatabase("in-process supervisor", (env) => {
  it("registers its processes, runs jobs concurrently, and deregisters on stop", async () => {
    const firm = env.firm();
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    const job = firm.defineJob("work", async (args: { n: number }) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 50));
      running--;
      done.push(args.n);
    });
    await job.enqueueAll(Array.from({ length: 12 }, (_, n) => ({ n })));
    const supervisor = await firm.start({ workers: [{ queues: "*", concurrency: 4, pollingInterval: 20 }] });
    const db = await env.db();
    const kinds = await db.selectFrom("firm_queue_processes").select(["kind", "supervisor_id", "metadata"]).execute();
    expect(kinds.map((row) => row.kind).sort()).toEqual(["Dispatcher", "Supervisor", "Worker"]);
    const worker = kinds.find((row) => row.kind === "Worker")!;
    expect(worker.supervisor_id).toBe(supervisor.id);
    expect(JSON.parse(worker.metadata!)).toEqual({ queues: "*", concurrency: 4, pollingInterval: 20 });
    await waitFor(() => done.length === 12, 10_000, "12 jobs");
    await supervisor.stop();
    expect(peak).toBe(4);
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
  });

  it("on stop, fires the AbortSignal and waits for running jobs to end", async () => {
    const firm = env.firm();
    let sawAbort = false;
    let started = false;
    const job = firm.defineJob("cooperative", async (_args, context) => {
      started = true;
      // Wrap up when asked (or give up waiting after 5 s), then end normally.
      await new Promise((resolve) => {
        context.signal.addEventListener("abort", resolve);
        setTimeout(resolve, 5000);
      });
      sawAbort = context.signal.aborted;
      await new Promise((resolve) => setTimeout(resolve, 50));
    });
    const id = (await job.enqueue(null)).id;
    const supervisor = await firm.start({ workers: [{ pollingInterval: 10 }], shutdownTimeout: 2000 });
    // Wait for the handler itself: a claim can be visible a moment before the job starts.
    await waitFor(() => started, 5000, "the job to start");
    await supervisor.stop();
    expect(sawAbort).toBe(true);
    expect((await firm.getJob(id))?.state).toBe("finished");
  });

  it("a handler that stops because of shutdown is put back in its queue, no attempt counted", async () => {
    const firm = env.firm();
    let started = false;
    const job = firm.defineJob("interruptible", async (_args, context) => {
      started = true;
      await new Promise((_resolve, reject) =>
        context.signal.addEventListener("abort", () => reject(context.signal.reason)),
      );
    });
    const id = (await job.enqueue(null)).id;
    const supervisor = await firm.start({ workers: [{ pollingInterval: 10 }] });
    await waitFor(() => started, 5000, "the job to start");
    await supervisor.stop();
    expect(await firm.getJob(id)).toMatchObject({ state: "ready", attempts: 0 });
  });

  it("jobs still running after shutdownTimeout go back to ready, and cannot finish later", async () => {
    const firm = env.firm();
    let finishLate: (() => void) | undefined;
    const job = firm.defineJob("stubborn", async () => new Promise<void>((resolve) => (finishLate = resolve)));
    const id = (await job.enqueue(null)).id;
    const supervisor = await firm.start({ workers: [{ pollingInterval: 10 }], shutdownTimeout: 100 });
    await waitFor(() => finishLate !== undefined, 5000, "the job to start");
    const started = Date.now();
    await supervisor.stop();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await firm.getJob(id)).toMatchObject({ state: "ready", attempts: 0 });
    finishLate!();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await firm.getJob(id)).toMatchObject({ state: "ready", attempts: 0, finishedAt: null });
  });

  it("a worker with a free slot claims again as soon as a job ends", async () => {
    const firm = env.firm();
    const ends: number[] = [];
    const job = firm.defineJob("quick", async () => void ends.push(Date.now()));
    await job.enqueueAll(Array.from({ length: 6 }, () => null));
    // A long polling interval: only the wake-up on completion can make this fast.
    const supervisor = await firm.start({ workers: [{ concurrency: 1, pollingInterval: 60_000 }] });
    try {
      await waitFor(() => ends.length === 6, 5000, "6 jobs run one after another");
    } finally {
      await supervisor.stop();
    }
  });

  it("stop() is idempotent and close() stops what is still running", async () => {
    const firm = env.firm();
    const supervisor = await firm.start();
    await Promise.all([supervisor.stop(), supervisor.stop()]);
    await firm.start();
    await firm.close();
    expect(await countRows(await env.db(), "firm_queue_processes")).toBe(0);
  });

  it("stop({ immediate: true }) puts claimed jobs back at once, without waiting for shutdownTimeout", async () => {
    const firm = env.firm();
    let finishLate!: () => void;
    const job = firm.defineJob("stubborn", async () => new Promise<void>((resolve) => (finishLate = resolve)));
    const id = (await job.enqueue(null)).id;
    const supervisor = await firm.start({ workers: [{ pollingInterval: 10 }], shutdownTimeout: 60_000 });
    await waitFor(() => finishLate !== undefined, 5000, "the handler to start");
    await supervisor.stop({ immediate: true });
    await supervisor.stopped;
    expect(await firm.getJob(id)).toMatchObject({ state: "ready", attempts: 0 });
    finishLate();
    expect(await countRows(await env.db(), "firm_queue_processes")).toBe(0);
  });
});
