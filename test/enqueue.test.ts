import { expect, it } from "vitest";
import type { Kysely } from "kysely";
import { ConfigurationError, SerializationError } from "../src/index.js";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { databaseNow } from "./support/database-clock.js";

describeEachDatabase("enqueue", (env) => {
  it("writes a ready job with the definition's defaults and returns its numeric id", async () => {
    const firm = env.firm();
    const greet = firm.defineJob("greet", async (_args: { name: string }) => {});
    const id = (await greet.enqueue({ name: "Ada" })).id;
    expect(typeof id).toBe("number");
    const job = await firm.getJob(id);
    expect(job).toMatchObject({
      id,
      name: "greet",
      queue: "default",
      priority: 0,
      arguments: { name: "Ada" },
      attempts: 0,
      state: "ready",
      finishedAt: null,
    });
    expect(job?.scheduledAt).toBeInstanceOf(Date);
  });

  it("uses per-definition and per-call queue and priority", async () => {
    const firm = env.firm();
    const report = firm.defineJob("report", async () => {}, { queue: "reports", priority: 5 });
    const a = (await report.enqueue(null)).id;
    const b = (await report.enqueue(null, { queue: "urgent", priority: -2 })).id;
    expect(await firm.getJob(a)).toMatchObject({ queue: "reports", priority: 5 });
    expect(await firm.getJob(b)).toMatchObject({ queue: "urgent", priority: -2 });
  });

  it("schedules jobs with wait or at, and treats a past `at` as due now", async () => {
    const firm = env.firm();
    const job = firm.defineJob("later", async () => {});
    const before = await databaseNow(firm);
    const waited = (await job.enqueue(null, { wait: "5m" })).id;
    const at = new Date(Date.now() + 60_000);
    const timed = (await job.enqueue(null, { at })).id;
    const past = (await job.enqueue(null, { at: new Date(Date.now() - 60_000) })).id;
    const waitedJob = await firm.getJob(waited);
    expect(waitedJob?.state).toBe("scheduled");
    expect(waitedJob!.scheduledAt!.getTime()).toBeGreaterThanOrEqual(before + 300_000);
    expect(waitedJob!.scheduledAt!.getTime()).toBeLessThan((await databaseNow(firm)) + 300_000 + 1000);
    expect(await firm.getJob(timed)).toMatchObject({ state: "scheduled", scheduledAt: at });
    expect((await firm.getJob(past))?.state).toBe("ready");
  });

  it("enqueueAll writes many jobs and returns their ids in argument order", async () => {
    const firm = env.firm();
    const job = firm.defineJob("bulk", async (_args: { n: number }) => {});
    const ids = (await job.enqueueAll(Array.from({ length: 1203 }, (_, n) => ({ n })))).map((result) => result.id);
    expect(ids).toHaveLength(1203);
    expect(new Set(ids).size).toBe(1203);
    for (const index of [0, 999, 1000, 1202]) {
      expect((await firm.getJob(ids[index]!))?.arguments).toEqual({ n: index });
    }
    expect(await countRows(await env.db(), "firm_queue_ready_executions")).toBe(1203);
    expect((await job.enqueueAll([])).map((result) => result.id)).toEqual([]);
  });

  it("round-trips Date and bigint arguments through the database", async () => {
    const firm = env.firm();
    const job = firm.defineJob("typed", async () => {});
    const when = new Date("2030-01-02T03:04:05.678Z");
    const id = (await job.enqueue({ when, big: 9007199254740993n, text: "ünïcødé ✓" })).id;
    expect((await firm.getJob(id))?.arguments).toEqual({ when, big: 9007199254740993n, text: "ünïcødé ✓" });
  });

  it("refuses unserializable arguments and writes nothing, even in a batch", async () => {
    const firm = env.firm();
    const job = firm.defineJob("strict", async () => {});
    await expect(job.enqueue({ callback: () => 1 } as never)).rejects.toThrow(SerializationError);
    await expect(job.enqueueAll([{ ok: 1 }, { bad: new Set() }] as never)).rejects.toThrow("arguments.bad is a Set");
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
  });

  it("refuses bad enqueue options and writes nothing", async () => {
    const firm = env.firm();
    const job = firm.defineJob("opts", async () => {});
    await expect(job.enqueue(null, { delay: 5 } as never)).rejects.toThrow('Unknown enqueue("opts") option "delay"');
    await expect(job.enqueue(null, { wait: "soon" as never })).rejects.toThrow(ConfigurationError);
    await expect(job.enqueue(null, { at: new Date("nope") })).rejects.toThrow("at must be a valid Date");
    await expect(job.enqueue(null, { at: new Date(), wait: 5 })).rejects.toThrow("cannot be used together");
    await expect(job.enqueue(null, { queue: "a,b" })).rejects.toThrow("queue must be a queue name");
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
  });

  it("enqueues by name, with undeclared: true, jobs declared elsewhere", async () => {
    const producer = env.firm();
    const id = (await producer.enqueue("defined-elsewhere", { x: 1 }, { queue: "remote", undeclared: true })).id!;
    expect(await producer.getJob(id)).toMatchObject({ name: "defined-elsewhere", queue: "remote", state: "ready" });
  });

  it("enqueues inside the caller's transaction: nothing exists if it rolls back", async () => {
    const firm = env.firm();
    const job = firm.defineJob("tx", async () => {});
    const db = (await firm.database()).db as unknown as Kysely<any>;
    await expect(
      db.transaction().execute(async (trx) => {
        await job.enqueue(null, { transaction: trx });
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
    const committed = await db.transaction().execute((trx) => job.enqueue(null, { transaction: trx }));
    expect((await firm.getJob(committed.id))?.state).toBe("ready");
  });

  it("returns null for a job that does not exist", async () => {
    expect(await env.firm().getJob(987654)).toBeNull();
  });
});
