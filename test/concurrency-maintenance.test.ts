import { expect, it } from "vitest";
import { claimJobs } from "../src/roles/claims.js";
import { runConcurrencyMaintenance } from "../src/roles/concurrency-maintenance.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { silentLogger, UndeclaredJobError, type FirmQueue } from "../src/index.js";
import { countRows, describeEachDatabase, waitFor, type TestEnv } from "./support/harness.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Claim every ready job for a process that then "crashes": it never finishes them. */
async function claimAndCrash(firm: FirmQueue): Promise<number[]> {
  const database = await firm.database();
  const processId = await registerProcess(
    database.db,
    { kind: "Worker", name: `crashed-${Math.random()}` },
    new Date(),
  );
  return (await claimJobs(database, new QueueSelector("*"), 100, processId)).map((row) => Number(row.id));
}

async function semaphoreValue(env: TestEnv, key: string): Promise<number | undefined> {
  const row = await (await env.db())
    .selectFrom("firm_queue_semaphores")
    .select("value")
    .where("key", "=", key)
    .executeTakeFirst();
  return row?.value;
}

const maintain = async (firm: FirmQueue) => runConcurrencyMaintenance(await firm.database(), (firm as any).policies);

describeEachDatabase("concurrency maintenance", (env) => {
  it("unblocks one job through the semaphore once a crashed holder's semaphore expires", async () => {
    const firm = env.firm();
    const sync = firm.defineJob("sync", async () => {}, { concurrency: { key: "k", duration: 300 } });
    const holder = (await sync.enqueue(null)).id;
    const low = (await sync.enqueue(null, { priority: 5 })).id;
    const high = (await sync.enqueue(null, { priority: 1 })).id;
    expect(await claimAndCrash(firm)).toEqual([holder]);
    // Before expiry there is nothing to do: the slot is legitimately held.
    expect(await maintain(firm)).toEqual({ expiredSemaphores: 0, promoted: 0 });
    expect((await firm.getJob(high))?.state).toBe("blocked");
    await sleep(400);
    expect(await maintain(firm)).toEqual({ expiredSemaphores: 1, promoted: 1 });
    expect((await firm.getJob(high))?.state).toBe("ready");
    expect((await firm.getJob(low))?.state).toBe("blocked");
    // The promoted job took the new semaphore's only slot.
    expect(await semaphoreValue(env, "sync/k")).toBe(0);
    expect(await maintain(firm)).toEqual({ expiredSemaphores: 0, promoted: 0 });
  });

  it("fills free slots of keys that did not expire, and never more than the limit", async () => {
    const firm = env.firm();
    const sync = firm.defineJob("sync", async (_args: { key: string }) => {}, {
      concurrency: { key: (args) => args.key, to: 3, duration: "1h" },
    });
    const ids = (await sync.enqueueAll(Array.from({ length: 7 }, () => ({ key: "a" })))).map((result) => result.id);
    await sync.enqueueAll(Array.from({ length: 8 }, () => ({ key: "b" })));
    expect(await countRows(await env.db(), "firm_queue_blocked_executions")).toBe(9);
    const db = await env.db();
    // A slot of "a" was released but no promotion followed (the window maintenance closes);
    // the semaphore of "b" is gone altogether (expired): all three of its slots count as free.
    await db.updateTable("firm_queue_semaphores").set({ value: 1 }).where("key", "=", "sync/a").execute();
    await db.deleteFrom("firm_queue_semaphores").where("key", "=", "sync/b").execute();
    expect(await maintain(firm)).toEqual({ expiredSemaphores: 0, promoted: 4 });
    expect(await semaphoreValue(env, "sync/a")).toBe(0);
    expect(await semaphoreValue(env, "sync/b")).toBe(0);
    expect((await firm.getJob(ids[3]!))?.state).toBe("ready");
    expect((await firm.getJob(ids[4]!))?.state).toBe("blocked");
    expect(await countRows(db, "firm_queue_blocked_executions")).toBe(5);
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(10);
    expect(await maintain(firm)).toEqual({ expiredSemaphores: 0, promoted: 0 });
  });

  it("runs in the dispatcher at its interval", async () => {
    const firm = env.firm();
    const ran: number[] = [];
    const sync = firm.defineJob("sync", async (args: { n: number }) => void ran.push(args.n), {
      concurrency: { key: "k", duration: 200 },
    });
    await sync.enqueue({ n: 1 });
    await claimAndCrash(firm);
    await sync.enqueue({ n: 2 });
    const supervisor = await firm.start({
      workers: [{ pollingInterval: 20 }],
      dispatchers: [{ pollingInterval: 50, concurrencyMaintenanceInterval: 100 }],
    });
    try {
      await waitFor(() => ran.length === 1, 10_000, "the blocked job to be unblocked by maintenance");
      expect(ran).toEqual([2]);
    } finally {
      await supervisor.stop();
    }
  });

  it("can be turned off", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    const sync = firm.defineJob("sync", async () => void ran.push("sync"), {
      concurrency: { key: "k", duration: 100 },
    });
    const probe = firm.defineJob("probe", async () => void ran.push("probe"));
    await sync.enqueue(null);
    await claimAndCrash(firm);
    const blocked = (await sync.enqueue(null)).id;
    await sleep(150);
    // The probe is dispatched by the same dispatcher after the semaphore expired: proof it polled.
    await probe.enqueue(null, { wait: 300 });
    const supervisor = await firm.start({
      workers: [{ pollingInterval: 20 }],
      dispatchers: [{ pollingInterval: 50, concurrencyMaintenanceInterval: false }],
    });
    try {
      await waitFor(() => ran.includes("probe"), 10_000, "the probe job");
      await sleep(200);
      expect(ran).toEqual(["probe"]);
      expect((await firm.getJob(blocked))?.state).toBe("blocked");
    } finally {
      await supervisor.stop();
    }
  });
});

describeEachDatabase("concurrency without the job's definition", (env) => {
  it("a producer that lacks the declaration enqueues without a key only when it opts out (undeclared: true)", async () => {
    const producer = env.firm();
    await expect(producer.enqueue("defined-elsewhere", { account: "A" })).rejects.toThrow(UndeclaredJobError);
    const id = (await producer.enqueue("defined-elsewhere", { account: "A" }, { undeclared: true })).id!;
    expect(await producer.getJob(id)).toMatchObject({ state: "ready", concurrencyKey: null });
  });

  it("a dispatcher that lacks the definition holds the key to one job at a time and warns", async () => {
    const producer = env.firm();
    const sync = producer.defineJob("sync", async () => {}, { concurrency: { key: "k", to: 2 } });
    const ids = (await sync.enqueueAll([null, null], { wait: 100 })).map((result) => result.id);
    const warnings: string[] = [];
    const dispatcher = env.firm({ logger: { ...silentLogger, warn: (message) => warnings.push(message) } });
    await sleep(150);
    expect(await dispatcher.dispatch()).toBe(2);
    expect(await Promise.all(ids.map(async (id) => (await producer.getJob(id))?.state))).toEqual(["ready", "blocked"]);
    expect(await semaphoreValue(env, "sync/k")).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("not defined in this process");
  });

  it("a worker that lacks the definition still gives the slot back when the job fails", async () => {
    const producer = env.firm();
    const sync = producer.defineJob("sync", async () => {}, { concurrency: { key: "k" } });
    const [first, second] = (await sync.enqueueAll([null, null])).map((result) => result.id);
    expect((await producer.getJob(second!))?.state).toBe("blocked");
    const worker = env.firm();
    expect(await worker.drain()).toBe(2);
    for (const id of [first!, second!])
      expect(await producer.getJob(id)).toMatchObject({ state: "failed", error: { name: "UnknownJobError" } });
    expect(await semaphoreValue(env, "sync/k")).toBe(1);
  });
});
