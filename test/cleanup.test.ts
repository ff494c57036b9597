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
});
