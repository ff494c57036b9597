import { expect, it } from "vitest";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { finishClaimedJobs } from "../src/lifecycle/claimed-jobs.js";
import { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRegistry } from "../src/definitions/job-registry.js";
import { silentLogger } from "../src/index.js";

/*
 * The rules every database's claim and finish must keep, whichever way it does them (one
 * statement of its own, or the portable transaction): paused queues, a claim target's scope and
 * exclusions, claim order, the stale-worker guard, and concurrency slots given back on finish.
 */
describeEachDatabase("claim and finish statements: guard cases", (env) => {
  it("a paused queue is not claimed, and the other queues are", async () => {
    const firm = env.firm();
    const stopped = firm.defineJob("stopped", async () => {}, { queue: "stopped" });
    const going = firm.defineJob("going", async () => {}, { queue: "going" });
    await stopped.enqueueAll([null, null]);
    const ids = (await going.enqueueAll([null, null])).map((result) => result.id) as number[];
    await firm.queues.pause("stopped");
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "pauses" }, new Date());
    // Selector "*" names no queue: the claim itself must leave the paused queue's rows alone.
    const claimed = await database.dialect.claimReady?.(database.db, {
      exclude: [],
      limit: 10,
      startNow: 0,
      processId,
      now: new Date(),
    });
    const viaWorker = claimed === undefined ? await claimJobs(database, new QueueSelector("*"), 10, processId) : null;
    const rows = claimed?.jobs ?? viaWorker!;
    expect(rows.map((row) => Number(row.id))).toEqual(ids);
    const db = await env.db();
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(2);
    await firm.queues.resume("stopped");
    expect((await claimJobs(database, new QueueSelector("*"), 10, processId)).map((row) => row.queue_name)).toEqual([
      "stopped",
      "stopped",
    ]);
  });

  it("claims one queue, or every queue but the excluded ones, in priority then id order, up to the limit", async () => {
    const firm = env.firm();
    const a = firm.defineJob("a", async () => {}, { queue: "a" });
    const b = firm.defineJob("b", async () => {}, { queue: "b" });
    const low = (await a.enqueueAll([null, null])).map((result) => result.id) as number[];
    const urgent = [(await a.enqueue(null, { priority: -5 })).id];
    const inB = (await b.enqueueAll([null, null])).map((result) => result.id) as number[];
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "scopes" }, new Date());
    const onlyA = await claimJobs(database, new QueueSelector(["a"]), 2, processId);
    expect(onlyA.map((row) => Number(row.id))).toEqual([urgent[0], low[0]]);
    const butA = await claimJobs(database, new QueueSelector(["a", "*"]), 10, processId);
    // "a" first (its last job), then every other queue.
    expect(butA.map((row) => Number(row.id))).toEqual([low[1], ...inB]);
    const db = await env.db();
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(0);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(5);
  });

  it("records nothing for a job whose claim was released (process judged dead), and keeps the job untouched", async () => {
    const firm = env.firm();
    const job = firm.defineJob("released", async () => {});
    const ids = (await job.enqueueAll([null, null])).map((result) => result.id) as number[];
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "stale" }, new Date());
    const rows = await claimJobs(database, new QueueSelector("*"), 10, processId);
    // Crash recovery removed the process row and put the first job back in line.
    const db = await env.db();
    await db.deleteFrom("firm_queue_claimed_executions").where("job_id", "=", ids[0]!).execute();
    await db
      .insertInto("firm_queue_ready_executions")
      .values({ job_id: ids[0]!, queue_name: "default", priority: 0, created_at: new Date() })
      .execute();
    await db.deleteFrom("firm_queue_processes").where("id", "=", processId).execute();
    const policies = new JobPolicies(new JobRegistry(), silentLogger);
    const recorded = await finishClaimedJobs(database, policies, processId, rows, true);
    expect([...recorded]).toEqual([ids[1]]);
    const first = await db
      .selectFrom("firm_queue_jobs")
      .selectAll()
      .where("id", "=", ids[0]!)
      .executeTakeFirstOrThrow();
    expect([first.finished_at, first.attempts]).toEqual([null, 0]);
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(1);
  });

  it("a concurrency-limited job's finish gives its slot to the next blocked job; others in the batch finish too", async () => {
    const firm = env.firm();
    const limited = firm.defineJob("limited", async () => {}, { concurrency: { key: "k", duration: "1h" } });
    const plain = firm.defineJob("plain", async () => {});
    const [first, second] = [(await limited.enqueue(null)).id, (await limited.enqueue(null)).id];
    const plainIds = (await plain.enqueueAll([null])).map((result) => result.id) as number[];
    const db = await env.db();
    expect(await countRows(db, "firm_queue_blocked_executions")).toBe(1);
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "slots" }, new Date());
    const rows = await claimJobs(database, new QueueSelector("*"), 10, processId);
    expect(rows.map((row) => Number(row.id)).sort((x, y) => x - y)).toEqual([first, plainIds[0]]);
    const policies = new JobPolicies(new JobRegistry(), silentLogger);
    const recorded = await finishClaimedJobs(database, policies, processId, rows, true);
    expect([...recorded].sort((x, y) => x - y)).toEqual([first, plainIds[0]]);
    // The blocked job holds the slot now and is ready.
    expect(await countRows(db, "firm_queue_blocked_executions")).toBe(0);
    const ready = await db.selectFrom("firm_queue_ready_executions").select("job_id").execute();
    expect(ready.map((row) => Number(row.job_id))).toEqual([second]);
    const semaphore = await db.selectFrom("firm_queue_semaphores").selectAll().executeTakeFirstOrThrow();
    expect(semaphore.value).toBe(0);
  });
});
