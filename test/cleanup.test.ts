import { expect, it } from "vitest";
import { ConfigurationError, silentLogger, type FirmQueue } from "../src/index.js";
import { countRows, describeEachDatabase, waitFor, type TestEnv } from "./support/harness.js";

const HOUR = 3_600_000;

/** Finish `count` jobs named `name`, then pretend they finished `agoMs` ago. Returns their ids. */
async function finishedJobs(
  env: TestEnv,
  firm: FirmQueue,
  name: string,
  count: number,
  agoMs: number,
): Promise<number[]> {
  const ids = (await Promise.all(Array.from({ length: count }, () => firm.enqueue(name, null)))).map(
    (result) => result.id!,
  );
  await firm.drain({ queues: "*", concurrency: 4 });
  const db = await env.db();
  await db
    .updateTable("firm_queue_jobs")
    .set({ finished_at: new Date(Date.now() - agoMs) })
    .where("id", "in", ids)
    .execute();
  return ids;
}

async function remaining(env: TestEnv, ids: readonly number[]): Promise<number> {
  const db = await env.db();
  const rows = await db.selectFrom("firm_queue_jobs").select("id").where("id", "in", ids).execute();
  return rows.length;
}

describeEachDatabase("finished-job cleanup", (env) => {
  it("clearFinishedJobs deletes only jobs finished before olderThan, of the given name, in batches", async () => {
    const firm = env.firm();
    firm.defineJob("report", async () => {});
    firm.defineJob("email", async () => {});
    const oldReports = await finishedJobs(env, firm, "report", 5, 3 * HOUR);
    const newReports = await finishedJobs(env, firm, "report", 2, 10_000);
    const oldEmails = await finishedJobs(env, firm, "email", 3, 3 * HOUR);
    const waiting = (await firm.enqueue("report", null, { wait: "1h" })).id!;
    const failed = firm.defineJob("fails", async () => {
      throw new Error("x");
    });
    const failedId = (await failed.enqueue(null)).id;
    await firm.drain();
    expect(await firm.clearFinishedJobs({ olderThan: "2h", name: "report", batchSize: 2 })).toBe(5);
    expect(await remaining(env, oldReports)).toBe(0);
    expect(await remaining(env, newReports)).toBe(2);
    expect(await remaining(env, oldEmails)).toBe(3);
    expect(await firm.clearFinishedJobs({ olderThan: new Date(Date.now() - 2 * HOUR) })).toBe(3);
    expect(await remaining(env, oldEmails)).toBe(0);
    expect(await firm.clearFinishedJobs({ olderThan: 1000 })).toBe(2);
    // Jobs that have not finished are never touched, however old.
    expect(await firm.getJob(waiting)).toMatchObject({ state: "scheduled" });
    expect(await firm.getJob(failedId)).toMatchObject({ state: "failed" });
  });

  it("clearFinishedJobs defaults olderThan to clearFinishedJobsAfter, and checks its options", async () => {
    const firm = env.firm({ clearFinishedJobsAfter: "1h" });
    firm.defineJob("report", async () => {});
    const old = await finishedJobs(env, firm, "report", 2, 2 * HOUR);
    const recent = await finishedJobs(env, firm, "report", 2, HOUR / 2);
    expect(await firm.clearFinishedJobs()).toBe(2);
    expect(await remaining(env, old)).toBe(0);
    expect(await remaining(env, recent)).toBe(2);
    await expect(firm.clearFinishedJobs({ olderThen: "1h" } as never)).rejects.toThrow(
      'Unknown clearFinishedJobs option "olderThen"',
    );
    await expect(firm.clearFinishedJobs({ batchSize: 0 })).rejects.toThrow("batchSize must be a whole number");
    await expect(firm.clearFinishedJobs({ olderThan: "yesterday" as never })).rejects.toThrow("olderThan must be");
    const keeper = env.firm({ clearFinishedJobsAfter: false });
    await expect(keeper.clearFinishedJobs()).rejects.toThrow(ConfigurationError);
    expect(await keeper.clearFinishedJobs({ olderThan: 0 })).toBe(2);
  });

  it("the dispatcher deletes old finished jobs in small batches, leaving recent ones", async () => {
    const batches: number[] = [];
    const logger = {
      ...silentLogger,
      info: (message: string, fields?: Record<string, unknown>) =>
        void (message === "deleted old finished jobs" && batches.push(fields!.count as number)),
    };
    const firm = env.firm({ clearFinishedJobsAfter: "1h", logger });
    firm.defineJob("report", async () => {});
    const old = await finishedJobs(env, firm, "report", 7, 2 * HOUR);
    const recent = await finishedJobs(env, firm, "report", 3, HOUR / 2);
    const supervisor = await firm.start({
      workers: [],
      dispatchers: [{ pollingInterval: 50, clearFinishedJobsInterval: 50, clearFinishedJobsBatchSize: 2 }],
    });
    try {
      await waitFor(async () => (await remaining(env, old)) === 0, 10_000, "old finished jobs to be deleted");
    } finally {
      await supervisor.stop();
    }
    expect(await remaining(env, recent)).toBe(3);
    expect(batches).toEqual([2, 2, 2, 1]);
  });

  it("with clearFinishedJobsAfter: false the dispatcher keeps finished jobs", async () => {
    const firm = env.firm({ clearFinishedJobsAfter: false });
    const ran: string[] = [];
    firm.defineJob("report", async () => {});
    firm.defineJob("marker", async () => void ran.push("marker"));
    const old = await finishedJobs(env, firm, "report", 3, 30 * 24 * HOUR);
    await firm.enqueue("marker", null, { wait: 200 });
    const supervisor = await firm.start({
      workers: [{ pollingInterval: 20 }],
      dispatchers: [{ pollingInterval: 20, clearFinishedJobsInterval: 20 }],
    });
    try {
      // By the time the dispatcher has promoted the marker job, it has polled many times.
      await waitFor(() => ran.length === 1, 10_000, "the marker job");
    } finally {
      await supervisor.stop();
    }
    expect(await remaining(env, old)).toBe(3);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(4);
  });

  /** Pretend every ended batch ended, and every ended job finished, `agoMs` ago. */
  async function ageEverything(agoMs: number): Promise<void> {
    const db = await env.db();
    const then = new Date(Date.now() - agoMs);
    await db.updateTable("firm_queue_batches").set({ ended_at: then }).where("ended_at", "is not", null).execute();
    await db.updateTable("firm_queue_jobs").set({ finished_at: then }).where("finished_at", "is not", null).execute();
  }

  it("clearFinishedJobs deletes ended batches whose jobs are gone, never a pending one or one a job still needs", async () => {
    const firm = env.firm();
    firm.defineJob("step", async () => {});
    firm.defineJob("bad", async () => Promise.reject(new Error("no")), { retry: { attempts: 1 } });
    firm.defineJob("after", async () => {}, { queue: "callbacks" });
    const ended = await firm.batch([
      { name: "step", args: 1 },
      { name: "step", args: 2 },
    ]);
    const pending = await firm.batch([{ name: "step", args: 3, options: { wait: "1h" } }]);
    const withFailed = await firm.batch([{ name: "bad", args: 4 }]);
    const withCallback = await firm.batch([{ name: "step", args: 5 }], { onFinish: { name: "after", args: null } });
    await firm.drain({ queues: "default" });
    expect((await firm.getBatch(withCallback.id))?.state).toBe("finished");
    await ageEverything(3 * HOUR);
    const db = await env.db();
    // A clear of one job name leaves batches alone.
    expect(await firm.clearFinishedJobs({ olderThan: "2h", name: "step" })).toBe(3);
    expect(await firm.getBatch(ended.id)).not.toBeNull();
    expect(await firm.clearFinishedJobs({ olderThan: "2h" })).toBe(0);
    expect(await firm.getBatch(ended.id)).toBeNull();
    expect(await firm.getBatch(pending.id)).toMatchObject({ state: "pending" });
    expect(await firm.getBatch(withFailed.id)).toMatchObject({ state: "failed" });
    // Its onFinish job has not run yet: it may still read the batch.
    expect(await firm.getBatch(withCallback.id)).toMatchObject({ state: "finished" });
    const memberships = await db.selectFrom("firm_queue_batch_jobs").select("batch_id").orderBy("batch_id").execute();
    expect(memberships.map((row) => Number(row.batch_id))).toEqual([pending.id, withFailed.id]);
    // Once the callback has run, and ended before the cutoff, its batch goes too.
    expect(await firm.drain()).toBe(1);
    expect(await firm.clearFinishedJobs({ olderThan: "2h" })).toBe(0);
    expect(await firm.getBatch(withCallback.id)).not.toBeNull();
    await ageEverything(3 * HOUR);
    expect(await firm.clearFinishedJobs({ olderThan: "2h" })).toBe(1);
    expect(await firm.getBatch(withCallback.id)).toBeNull();
    expect(await firm.getBatch(withFailed.id)).not.toBeNull();
    expect(await countRows(db, "firm_queue_batches")).toBe(2);
  });

  it("the dispatcher deletes old ended batches in passes of at most its batch size, and keeps pending ones", async () => {
    const deleted: number[] = [];
    const logger = {
      ...silentLogger,
      info: (message: string, fields?: Record<string, unknown>) =>
        void (message === "deleted old ended batches" && deleted.push(fields!.count as number)),
    };
    const firm = env.firm({ clearFinishedJobsAfter: "1h", logger });
    firm.defineJob("step", async () => {});
    const ended = [];
    for (let i = 0; i < 5; i++) ended.push((await firm.batch([{ name: "step", args: i }])).id);
    const pending = await firm.batch([{ name: "step", args: 9, options: { wait: "2h" } }]);
    await firm.drain();
    await ageEverything(2 * HOUR);
    const supervisor = await firm.start({
      workers: [],
      dispatchers: [{ pollingInterval: 50, clearFinishedJobsInterval: 50, clearFinishedJobsBatchSize: 2 }],
    });
    try {
      await waitFor(async () => (await countRows(await env.db(), "firm_queue_batches")) === 1, 10_000, "old batches");
    } finally {
      await supervisor.stop();
    }
    expect(deleted).toEqual([2, 2, 1]);
    expect(await firm.getBatch(pending.id)).toMatchObject({ state: "pending", pending: 1 });
    for (const id of ended) expect(await firm.getBatch(id)).toBeNull();
  });
});
