import { expect, it } from "vitest";
import type { FirmQueue, JobContext } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";

/** A job that records, in run order, the queue and priority of each run. */
function recorder(firm: FirmQueue) {
  const runs: string[] = [];
  const job = firm.defineJob("rec", async (args: { tag: string }, context: JobContext) => {
    runs.push(`${args.tag}@${context.queue}`);
  });
  return { job, runs };
}

describeEachDatabase("claiming", (env) => {
  it("claims by priority, then by job id (FIFO)", async () => {
    const firm = env.firm();
    const { job, runs } = recorder(firm);
    await job.enqueue({ tag: "p5-first" }, { priority: 5 });
    await job.enqueue({ tag: "p0-first" }, { priority: 0 });
    await job.enqueue({ tag: "p5-second" }, { priority: 5 });
    await job.enqueue({ tag: "p-1" }, { priority: -1 });
    await job.enqueue({ tag: "p0-second" }, { priority: 0 });
    expect(await firm.drain()).toBe(5);
    expect(runs).toEqual([
      "p-1@default",
      "p0-first@default",
      "p0-second@default",
      "p5-first@default",
      "p5-second@default",
    ]);
  });

  it('"*" takes every queue in one global priority order', async () => {
    const firm = env.firm();
    const { job, runs } = recorder(firm);
    await job.enqueue({ tag: "1" }, { queue: "b", priority: 2 });
    await job.enqueue({ tag: "2" }, { queue: "a", priority: 3 });
    await job.enqueue({ tag: "3" }, { queue: "c", priority: 1 });
    await firm.drain({ queues: "*" });
    expect(runs).toEqual(["3@c", "1@b", "2@a"]);
  });

  it("a list of queues is polled in list order, whatever the priorities", async () => {
    const firm = env.firm();
    const { job, runs } = recorder(firm);
    await job.enqueue({ tag: "a-low" }, { queue: "a", priority: 9 });
    await job.enqueue({ tag: "b-high" }, { queue: "b", priority: 0 });
    await job.enqueue({ tag: "a-high" }, { queue: "a", priority: 0 });
    await job.enqueue({ tag: "other" }, { queue: "other", priority: -5 });
    await firm.drain({ queues: ["a", "b"], concurrency: 10 });
    expect(runs).toEqual(["a-high@a", "a-low@a", "b-high@b"]);
    expect((await firm.queues.list()).map((queue) => [queue.name, queue.size])).toEqual([["other", 1]]);
  });

  it("a prefix* pattern takes matching queues in name order, and never repeats a queue", async () => {
    const firm = env.firm();
    const { job, runs } = recorder(firm);
    await job.enqueue({ tag: "1" }, { queue: "mail_z" });
    await job.enqueue({ tag: "2" }, { queue: "mail_a" });
    await job.enqueue({ tag: "3" }, { queue: "mailbox" });
    await job.enqueue({ tag: "4" }, { queue: "Mail_upper" });
    await job.enqueue({ tag: "5" }, { queue: "mail%odd" });
    await job.enqueue({ tag: "6" }, { queue: "critical" });
    await firm.drain({ queues: "mail_z,mail_*,critical", concurrency: 10 });
    // "mail_" is a literal prefix: "mailbox", "mail%odd" and (case-sensitive) "Mail_upper" do not match.
    expect(runs).toEqual(["1@mail_z", "2@mail_a", "6@critical"]);
  });

  it('"*" inside a list means every queue not named before it, in global order', async () => {
    const firm = env.firm();
    const { job, runs } = recorder(firm);
    await job.enqueue({ tag: "x" }, { queue: "x", priority: 1 });
    await job.enqueue({ tag: "y" }, { queue: "y", priority: 0 });
    await job.enqueue({ tag: "slow" }, { queue: "slow", priority: -1 });
    await job.enqueue({ tag: "z" }, { queue: "z", priority: -9 });
    await firm.drain({ queues: ["slow", "*"], concurrency: 10 });
    expect(runs).toEqual(["slow@slow", "z@z", "y@y", "x@x"]);
  });

  it("never claims from a paused queue until it is resumed", async () => {
    const firm = env.firm();
    const { job, runs } = recorder(firm);
    await firm.queues.pause("held");
    await firm.queues.pause("held"); // pausing twice is harmless
    await job.enqueue({ tag: "held" }, { queue: "held", priority: -10 });
    await job.enqueue({ tag: "free" }, { queue: "free" });
    expect(await firm.drain({ queues: "*" })).toBe(1);
    expect(await firm.drain({ queues: ["held", "free"] })).toBe(0);
    expect(await firm.drain({ queues: "hel*" })).toBe(0);
    expect(runs).toEqual(["free@free"]);
    expect(await firm.queues.list()).toEqual([{ name: "held", size: 1, latency: expect.any(Number), paused: true }]);
    await firm.queues.resume("held");
    expect(await firm.drain({ queues: "held" })).toBe(1);
    expect(runs).toEqual(["free@free", "held@held"]);
    expect(await firm.queues.list()).toEqual([]);
  });

  it("queue names are case-sensitive", async () => {
    const firm = env.firm();
    const { job, runs } = recorder(firm);
    await job.enqueue({ tag: "upper" }, { queue: "Reports" });
    await job.enqueue({ tag: "lower" }, { queue: "reports" });
    await firm.drain({ queues: "reports" });
    expect(runs).toEqual(["lower@reports"]);
  });

  it("lists queue sizes and the latency of the oldest ready job", async () => {
    const firm = env.firm();
    const { job } = recorder(firm);
    await job.enqueueAll([{ tag: "1" }, { tag: "2" }], { queue: "q1" });
    await job.enqueue({ tag: "3" }, { queue: "q2" });
    await new Promise((resolve) => setTimeout(resolve, 30));
    const queues = await firm.queues.list();
    expect(queues.map(({ name, size, paused }) => ({ name, size, paused }))).toEqual([
      { name: "q1", size: 2, paused: false },
      { name: "q2", size: 1, paused: false },
    ]);
    expect(queues[0]!.latency).toBeGreaterThanOrEqual(25);
  });
});
