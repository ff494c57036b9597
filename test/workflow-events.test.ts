import { expect, it } from "vitest";
import type { FirmQueue, JobEventMap, JobEventName } from "../src/index.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { parseScrape } from "./support/prometheus-text.js";

type WorkflowEvent = "job.pending" | "job.dependenciesMet" | "job.dependencyCancelled" | "batch.ended";

/** One event heard, with what another connection read of its job (or batch) when it was told. */
interface Heard {
  readonly name: JobEventName;
  readonly event: Record<string, unknown>;
  /** The state another FirmQueue (its own connections) read as the listener ran: committed data only. */
  readonly seen: Promise<string | null>;
}

/**
 * Record `names` from `firm`; each listener asks `observer` (another pool, so it sees only what
 * has committed) for the job's or batch's state at once: an event told before the commit reads
 * the state from before the change.
 */
function record(firm: FirmQueue, observer: FirmQueue, names: readonly WorkflowEvent[]): Heard[] {
  const heard: Heard[] = [];
  for (const name of names)
    firm.events.on(name, (event: JobEventMap[WorkflowEvent]) => {
      const seen =
        "batchId" in event
          ? observer.getBatch(event.batchId).then((batch) => batch?.state ?? null)
          : observer.getJob(event.jobId).then((job) => job?.state ?? null);
      heard.push({ name, event: { ...event }, seen });
    });
  return heard;
}

/** The events heard of one job (or batch) id, as [name, payload, state read when told]. */
async function about(heard: readonly Heard[], id: number): Promise<[string, Record<string, unknown>, string | null][]> {
  const mine = heard.filter(({ event }) => (event.jobId ?? event.batchId) === id);
  return Promise.all(mine.map(async ({ name, event, seen }) => [name, event, await seen] as const)).then((rows) =>
    rows.map((row) => [...row]),
  );
}

const ALL: readonly WorkflowEvent[] = ["job.pending", "job.dependenciesMet", "job.dependencyCancelled", "batch.ended"];

describeEachDatabase("workflow events and metrics", (env) => {
  it("job.pending at enqueue and job.dependenciesMet when the last dependency finished, told after each commit", async () => {
    const firm = env.firm();
    const heard = record(firm, env.firm(), ALL);
    const part = firm.defineJob("part", async () => "done");
    const whole = firm.defineJob("whole", async () => undefined, { queue: "wholes" });
    const first = await enqueued(part.enqueue(null));
    const second = await enqueued(part.enqueue(null, { queue: "later" }));
    const id = await enqueued(whole.enqueue(null, { dependsOn: [first, second] }));
    expect(await about(heard, id)).toEqual([
      ["job.pending", { jobId: id, job: "whole", queue: "wholes", dependencies: 2 }, "pending"],
    ]);
    await firm.drain({ queues: "default" });
    expect(heard).toHaveLength(1);
    await firm.drain({ queues: "later" });
    expect(await about(heard, id)).toEqual([
      ["job.pending", { jobId: id, job: "whole", queue: "wholes", dependencies: 2 }, "pending"],
      ["job.dependenciesMet", { jobId: id, job: "whole", queue: "wholes" }, "ready"],
    ]);
    // A dependency already finished does not count: one open dependency of two.
    const late = await enqueued(whole.enqueue(null, { dependsOn: [first, await enqueued(part.enqueue(null))] }));
    expect((await about(heard, late))[0]![1]).toMatchObject({ dependencies: 1 });
    expect(heard.filter(({ name }) => name === "batch.ended")).toEqual([]);
  });

  it("a dependency failed for good cancels in cascade through two levels: job.dependencyCancelled, never job.cancelled", async () => {
    const firm = env.firm();
    const heard = record(firm, env.firm(), ALL);
    const cancelledTold: number[] = [];
    firm.events.on("job.cancelled", (event) => void cancelledTold.push(event.jobId));
    const broken = firm.defineJob(
      "broken",
      async () => {
        throw new Error("no");
      },
      { retry: { attempts: 1 } },
    );
    const step = firm.defineJob("step", async () => undefined, { queue: "steps" });
    const root = await enqueued(broken.enqueue(null));
    const child = await enqueued(step.enqueue(null, { dependsOn: [root] }));
    const grandchild = await enqueued(step.enqueue(null, { dependsOn: [child] }));
    const anyway = await enqueued(step.enqueue(null, { dependsOn: [root], onDependencyFailure: "run" }));
    await firm.drain({ queues: "default" });
    const base = { job: "step", queue: "steps" };
    expect((await about(heard, child)).slice(1)).toEqual([
      [
        "job.dependencyCancelled",
        { jobId: child, ...base, dependencyId: root, dependencyState: "failed" },
        "cancelled",
      ],
    ]);
    expect((await about(heard, grandchild)).slice(1)).toEqual([
      [
        "job.dependencyCancelled",
        { jobId: grandchild, ...base, dependencyId: child, dependencyState: "cancelled" },
        "cancelled",
      ],
    ]);
    expect((await about(heard, anyway)).slice(1)).toEqual([
      ["job.dependenciesMet", { jobId: anyway, ...base }, "ready"],
    ]);
    // Enqueued after its dependency failed: cancelled at once, told so (and never pending).
    const after = await enqueued(step.enqueue(null, { dependsOn: [anyway, root] }));
    expect(await about(heard, after)).toEqual([
      [
        "job.dependencyCancelled",
        { jobId: after, ...base, dependencyId: root, dependencyState: "failed" },
        "cancelled",
      ],
    ]);
    expect(cancelledTold).toEqual([]);
  });

  it("firm.jobs.cancel of a job with dependents tells their cascade after its commit", async () => {
    const firm = env.firm();
    const heard = record(firm, env.firm(), ALL);
    const work = firm.defineJob("work", async () => undefined);
    const head = await enqueued(work.enqueue(null, { wait: "1h" }));
    const next = await enqueued(work.enqueue(null, { dependsOn: [head] }));
    const last = await enqueued(work.enqueue(null, { dependsOn: [next] }));
    expect(await firm.jobs.cancel(head)).toBe("cancelled");
    expect((await about(heard, next)).slice(1)).toEqual([
      [
        "job.dependencyCancelled",
        { jobId: next, job: "work", queue: "default", dependencyId: head, dependencyState: "cancelled" },
        "cancelled",
      ],
    ]);
    expect((await about(heard, last)).slice(1)).toEqual([
      [
        "job.dependencyCancelled",
        { jobId: last, job: "work", queue: "default", dependencyId: next, dependencyState: "cancelled" },
        "cancelled",
      ],
    ]);
  });

  it("a queue clear that discards a dependency tells its dependents' cascade and its batch's end", async () => {
    const firm = env.firm();
    const heard = record(firm, env.firm(), ["job.dependencyCancelled"]);
    const ended: JobEventMap["batch.ended"][] = [];
    firm.events.on("batch.ended", (event) => void ended.push(event));
    firm.defineJob("work", async () => undefined, { queue: "doomed" });
    firm.defineJob("next", async () => undefined);
    const batch = await firm.batch([{ name: "work", args: null }]);
    const head = batch.jobs[0]!.id!;
    const next = await enqueued(firm.enqueue("next", null, { dependsOn: [head] }));
    expect(await firm.queues.clear("doomed")).toBe(1);
    expect((await about(heard, next)).slice(-1)).toEqual([
      [
        "job.dependencyCancelled",
        { jobId: next, job: "next", queue: "default", dependencyId: head, dependencyState: "cancelled" },
        "cancelled",
      ],
    ]);
    expect(ended).toEqual([
      { batchId: batch.id, state: "cancelled", total: 1, finished: 0, failed: 0, cancelled: 1, callbackJobIds: [] },
    ]);
  });

  it("a flow's parent is told pending with its children's count", async () => {
    const firm = env.firm();
    const heard = record(firm, env.firm(), ALL);
    firm.defineJob("leaf", async () => undefined);
    firm.defineJob("root", async () => undefined);
    const tree = await firm.flow({
      name: "root",
      args: null,
      children: [
        { name: "leaf", args: 1 },
        { name: "leaf", args: 2 },
        { name: "leaf", args: 3 },
      ],
    });
    expect(await about(heard, tree.id!)).toEqual([
      ["job.pending", { jobId: tree.id, job: "root", queue: "default", dependencies: 3 }, "pending"],
    ]);
    await firm.drain();
    expect((await about(heard, tree.id!)).map(([name]) => name)).toEqual(["job.pending", "job.dependenciesMet"]);
  });

  it("batch.ended once, with the batch's state, counts and callback ids, after the commit that ended it", async () => {
    const firm = env.firm();
    const heard = record(firm, env.firm(), ["batch.ended"]);
    firm.defineJob("ok", async () => undefined);
    firm.defineJob(
      "bad",
      async () => {
        throw new Error("no");
      },
      { retry: { attempts: 1 } },
    );
    firm.defineJob("after", async () => undefined);
    const failing = await firm.batch(
      [
        { name: "ok", args: 1 },
        { name: "bad", args: 2 },
        { name: "ok", args: 3, options: { wait: "1h" } },
      ],
      {
        onSuccess: { name: "after", args: "s" },
        onFailure: { name: "after", args: "f" },
        onFinish: { name: "after", args: "e" },
      },
    );
    await firm.drain();
    expect(heard).toEqual([]);
    expect(await firm.jobs.cancel(failing.jobs[2]!.id!)).toBe("cancelled");
    const told = await about(heard, failing.id);
    expect(told).toHaveLength(1);
    const [name, event, seen] = told[0]!;
    expect([name, seen]).toEqual(["batch.ended", "failed"]);
    expect(event).toEqual({
      batchId: failing.id,
      state: "failed",
      total: 3,
      finished: 1,
      failed: 1,
      cancelled: 1,
      callbackJobIds: [expect.any(Number), expect.any(Number)],
    });
    const callbacks = await Promise.all((event.callbackJobIds as number[]).map((id) => firm.getJob(id)));
    expect(callbacks.map((job) => [job?.name, job?.arguments])).toEqual([
      ["after", "f"],
      ["after", "e"],
    ]);
    const fine = await firm.batch([{ name: "ok", args: 4 }]);
    await firm.drain();
    expect(await about(heard, fine.id)).toEqual([
      [
        "batch.ended",
        { batchId: fine.id, state: "finished", total: 1, finished: 1, failed: 0, cancelled: 0, callbackJobIds: [] },
        "finished",
      ],
    ]);
  });

  it("counts pending, released and cascade-cancelled jobs and ended batches", async () => {
    const firm = env.firm();
    firm.metrics.configure({ gaugeInterval: 0 });
    firm.metrics.enable();
    const broken = firm.defineJob(
      "broken",
      async () => {
        throw new Error("no");
      },
      { retry: { attempts: 1 } },
    );
    const step = firm.defineJob("step", async () => undefined, { queue: "steps" });
    const root = await enqueued(broken.enqueue(null));
    const child = await enqueued(step.enqueue(null, { dependsOn: [root] }));
    await enqueued(step.enqueue(null, { dependsOn: [child] }));
    await enqueued(step.enqueue(null, { dependsOn: [root], onDependencyFailure: "run" }));
    await firm.batch([{ name: "step", args: null }]);
    await firm.batch([{ name: "broken", args: null }]);
    await firm.drain();
    const scrape = parseScrape(await firm.metrics.text());
    const steps = { queue: "steps", job: "step" };
    expect(scrape.types.get("firm_queue_jobs_pending_total")).toBe("counter");
    expect(scrape.value("firm_queue_jobs_pending_total", steps)).toBe(3);
    expect(scrape.value("firm_queue_jobs_dependencies_met_total", steps)).toBe(1);
    expect(scrape.value("firm_queue_jobs_dependency_cancelled_total", steps)).toBe(2);
    expect(scrape.types.get("firm_queue_batches_ended_total")).toBe("counter");
    expect(scrape.value("firm_queue_batches_ended_total", { state: "finished" })).toBe(1);
    expect(scrape.value("firm_queue_batches_ended_total", { state: "failed" })).toBe(1);
    expect(scrape.value("firm_queue_batches_ended_total", { state: "cancelled" })).toBeUndefined();
    // Cascade-cancelled jobs are not counted as cancelled by hand.
    expect(scrape.value("firm_queue_jobs_cancelled_total", steps)).toBeUndefined();
  });
});
