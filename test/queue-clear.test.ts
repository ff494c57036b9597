import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";

describeEachDatabase("queue operations", (env) => {
  it("clear discards the queue's ready jobs only, in batches, and returns the count", async () => {
    const firm = env.firm();
    const job = firm.defineJob("work", async () => {});
    const failing = firm.defineJob("fails", async () => {
      throw new Error("x");
    });
    const failedId = (await failing.enqueue(null, { queue: "mail" })).id;
    await firm.drain();
    const ready = (await job.enqueueAll([{}, {}, {}, {}, {}], { queue: "mail" })).map((result) => result.id);
    const later = (await job.enqueue({}, { queue: "mail", wait: "1h" })).id;
    const elsewhere = (await job.enqueue({}, { queue: "reports" })).id;
    const batches: Array<{ batch: number; total: number }> = [];
    expect(await firm.queues.clear("mail", { batchSize: 2, onBatch: (progress) => batches.push(progress) })).toBe(5);
    // One short transaction per batch, never one for the whole queue.
    expect(batches).toEqual([
      { batch: 2, total: 2 },
      { batch: 2, total: 4 },
      { batch: 1, total: 5 },
    ]);
    for (const id of ready) expect(await firm.getJob(id)).toBeNull();
    expect(await firm.getJob(later)).toMatchObject({ state: "scheduled" });
    expect(await firm.getJob(elsewhere)).toMatchObject({ state: "ready" });
    expect(await firm.getJob(failedId)).toMatchObject({ state: "failed" });
    expect(await firm.queues.clear("mail")).toBe(0);
    expect(await firm.queues.clear("never-used")).toBe(0);
    await expect(firm.queues.clear("has space")).rejects.toThrow("queue must be a queue name");
    await expect(firm.queues.clear("mail", { batch: 2 } as never)).rejects.toThrow(
      'Unknown queues.clear option "batch"',
    );
    await expect(firm.queues.clear("mail", { onBatch: 1 } as never)).rejects.toThrow(
      "queues.clear option onBatch must be a function",
    );
  });

  it("list gives size, latency and paused for each queue", async () => {
    const firm = env.firm();
    const job = firm.defineJob("work", async () => {});
    await job.enqueueAll([{}, {}, {}], { queue: "a" });
    await job.enqueue({}, { queue: "b" });
    await firm.queues.pause("b");
    await firm.queues.pause("idle");
    await new Promise((resolve) => setTimeout(resolve, 30));
    const queues = await firm.queues.list();
    expect(queues.map(({ name, size, paused }) => ({ name, size, paused }))).toEqual([
      { name: "a", size: 3, paused: false },
      { name: "b", size: 1, paused: true },
      { name: "idle", size: 0, paused: true },
    ]);
    expect(queues[0]!.latency).toBeGreaterThanOrEqual(20);
    expect(queues[2]!.latency).toBe(0);
    expect(await firm.queues.clear("a")).toBe(3);
    expect((await firm.queues.list()).map((queue) => queue.name)).toEqual(["b", "idle"]);
  });

  it("clear racing with workers: every job either ran or was discarded, never both", async () => {
    const firm = env.firm();
    const ran = new Set<number>();
    const job = firm.defineJob("race", async (_args: null, context) => void ran.add(context.jobId));
    const ids = (
      await job.enqueueAll(
        Array.from({ length: 120 }, () => null),
        { queue: "contested" },
      )
    ).map((result) => result.id);
    const worker = env.firm();
    worker.defineJob("race", async (_args: null, context) => void ran.add(context.jobId));
    const [, discarded] = await Promise.all([
      worker.drain({ concurrency: 5 }),
      firm.queues.clear("contested", { batchSize: 10 }),
    ]);
    const left = await Promise.all(ids.map((id) => firm.getJob(id)));
    const discardedIds = ids.filter((_, index) => left[index] === null);
    expect(discardedIds.length).toBe(discarded);
    for (const id of discardedIds) expect(ran.has(id)).toBe(false);
    for (const [index, info] of left.entries()) if (info) expect(info.state, `job ${ids[index]}`).toBe("finished");
    expect(ran.size + discarded).toBe(120);
  });

  if (env.dialect !== "sqlite") {
    // SQLite serializes claimers on its write lock, so no row is ever "being claimed" while clear runs.
    it("clear skips ready jobs a worker is claiming at that moment", async () => {
      const firm = env.firm();
      const job = firm.defineJob("work", async () => {});
      const [held, free] = (await job.enqueueAll([{}, {}], { queue: "q" })).map((result) => result.id);
      const db = await env.db();
      let discarded = -1;
      await db.transaction().execute(async (trx) => {
        // Hold the ready row the way a claim transaction does.
        await trx
          .selectFrom("firm_queue_ready_executions")
          .select("id")
          .where("job_id", "=", held!)
          .forUpdate()
          .execute();
        discarded = await firm.queues.clear("q");
      });
      expect(discarded).toBe(1);
      expect(await firm.getJob(held!)).toMatchObject({ state: "ready" });
      expect(await firm.getJob(free!)).toBeNull();
    });
  }
});
