import { expect, it } from "vitest";
import { countRows, describeEachDatabase, enqueued } from "./support/harness.js";
import { runCli } from "./support/processes.js";

describeEachDatabase("clearing a queue with jobs waiting for budget", (env) => {
  it("queues.clear deletes the throttled jobs with their rows, and only the queue's", async () => {
    const firm = env.firm();
    const job = firm.defineJob("limited", async () => {}, { rateLimit: { limit: 1, period: "1m" } });
    const plain = firm.defineJob("plain", async () => {});
    const throttled = await Promise.all([1, 2, 3].map(() => enqueued(job.enqueue(null, { queue: "mail" }))));
    const ready = await enqueued(plain.enqueue(null, { queue: "mail" }));
    const other = await enqueued(job.enqueue(null, { queue: "reports" }));
    expect((await firm.getJob(throttled[0]!))?.state).toBe("throttled");
    const batches: { batch: number; total: number }[] = [];
    expect(await firm.queues.clear("mail", { batchSize: 2, onBatch: (progress) => batches.push(progress) })).toBe(4);
    expect(batches).toEqual([
      { batch: 1, total: 1 },
      { batch: 2, total: 3 },
      { batch: 1, total: 4 },
    ]);
    for (const id of [...throttled, ready]) expect(await firm.getJob(id)).toBeNull();
    const db = await env.db();
    // Nothing half-deleted: no waiting row left without its job, and the other queue's job stays.
    const rows = await db.selectFrom("firm_queue_throttled_executions").select(["job_id", "queue_name"]).execute();
    expect(rows.map((row) => Number(row.job_id))).toEqual([other]);
    expect(await countRows(db, "firm_queue_jobs")).toBe(1);
    expect((await firm.getJob(other))?.state).toBe("throttled");
  });

  it("the CLI's queues clear counts and deletes them too", async () => {
    const firm = env.firm();
    const job = firm.defineJob("limited", async () => {}, { rateLimit: { limit: 1, period: "1m" } });
    await job.enqueueAll([null, null, null], { queue: "mail" });
    const cleared = await runCli(["queues", "clear", "mail", "--yes", "--database-url", env.url]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toContain("Cleared 3 waiting job(s) from queue mail.");
    const db = await env.db();
    expect(await countRows(db, "firm_queue_throttled_executions")).toBe(0);
    expect(await countRows(db, "firm_queue_jobs")).toBe(0);
  });
});
