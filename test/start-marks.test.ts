import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { claimReadyExecutions } from "../src/models/ready-execution.js";
import { finishClaimedJobs } from "../src/lifecycle/claimed-jobs.js";
import { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRegistry } from "../src/definitions/job-registry.js";
import { markedAtClaim } from "../src/database/claimed-job.js";
import { silentLogger } from "../src/index.js";
import type { Db } from "../src/database/dialect.js";

/*
 * Where a claim is marked started, on every database, so that crash recovery can tell a job that
 * ran from one that waited in a worker's buffer: the claim itself marks the claims it hands to
 * free slots (`startNow`), and a finish batch marks the claims of jobs that left the buffer since
 * (`startedIds`), in its own statement or transaction.
 */
describeEachDatabase("start marks written by the claim and by the finish batch", (env) => {
  async function setup(count: number, queues: readonly string[] = ["q"]) {
    const firm = env.firm();
    const ids: number[] = [];
    for (const queue of queues) {
      const job = firm.defineJob(`job-${queue}`, async () => {}, { queue });
      ids.push(...((await job.enqueueAll([...Array(count)].map(() => null))).map((result) => result.id) as number[]));
    }
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "marks" }, new Date());
    return { database, processId, ids };
  }

  async function startedIds(db: Db): Promise<number[]> {
    const rows = await db
      .selectFrom("firm_queue_claimed_executions")
      .select("job_id")
      .where("started_at", "is not", null)
      .execute();
    return rows.map((row) => Number(row.job_id)).sort((a, b) => a - b);
  }

  it("a claim marks started the first startNow jobs in claim order, flags them, and leaves the rest unmarked", async () => {
    const { database, processId, ids } = await setup(5);
    const jobs = await claimJobs(database, new QueueSelector("*"), 5, processId, { startNow: 2 });
    expect(jobs.map((job) => Number(job.id))).toEqual(ids);
    expect(jobs.map(markedAtClaim)).toEqual([true, true, false, false, false]);
    expect(await startedIds(await env.db())).toEqual(ids.slice(0, 2));
  });

  it("startNow counts across the queues of one claim, in their order", async () => {
    const { database, processId, ids } = await setup(2, ["a", "b"]);
    const jobs = await claimJobs(database, new QueueSelector(["a", "b"]), 4, processId, { startNow: 3 });
    expect(jobs.map((job) => Number(job.id))).toEqual(ids);
    expect(jobs.map(markedAtClaim)).toEqual([true, true, true, false]);
    expect(await startedIds(await env.db())).toEqual(ids.slice(0, 3));
  });

  it("a claim without startNow marks nothing", async () => {
    const { database, processId } = await setup(3);
    const jobs = await claimJobs(database, new QueueSelector("*"), 3, processId);
    expect(jobs.map(markedAtClaim)).toEqual([false, false, false]);
    expect(await startedIds(await env.db())).toEqual([]);
  });

  it("the portable claim transaction marks the same claims", async () => {
    const { database, processId, ids } = await setup(3);
    const jobs = await database.claimTransaction((trx) =>
      claimReadyExecutions(trx, database.dialect, { exclude: [] }, 3, processId, new Date(), 1),
    );
    expect(jobs.map(markedAtClaim)).toEqual([true, false, false]);
    expect(await startedIds(await env.db())).toEqual(ids.slice(0, 1));
  });

  it("a finish batch marks the started claims it is given, in its single statement and in the portable transaction", async () => {
    const { database, processId, ids } = await setup(6);
    const jobs = await claimJobs(database, new QueueSelector("*"), 6, processId);
    const policies = new JobPolicies(new JobRegistry(), silentLogger);
    const db = await env.db();
    // A plain finish: the database's own statement.
    const first = await finishClaimedJobs(database, policies, processId, [jobs[0]!], true, [ids[1]!]);
    expect([...first]).toEqual([ids[0]]);
    expect(await startedIds(db)).toEqual([ids[1]]);
    // A job with a result goes through the portable transaction.
    const withResult = { ...jobs[1]!, result: JSON.stringify("done") };
    const second = await finishClaimedJobs(database, policies, processId, [withResult], true, [ids[2]!]);
    expect([...second]).toEqual([ids[1]]);
    expect(await startedIds(db)).toEqual([ids[2]]);
    // No job to record: the marks alone.
    expect([...(await finishClaimedJobs(database, policies, processId, [], true, [ids[3]!]))]).toEqual([]);
    expect(await startedIds(db)).toEqual([ids[2], ids[3]]);
    // Another process's claims are not its to mark.
    await finishClaimedJobs(database, policies, processId + 1, [], true, [ids[4]!]);
    expect(await startedIds(db)).toEqual([ids[2], ids[3]]);
  });

  it("marks given with a job that turns out to have dependents are written by the transaction that finishes it", async () => {
    const { database, processId, ids } = await setup(2);
    const jobs = await claimJobs(database, new QueueSelector("*"), 2, processId);
    // A dependent added while the job ran: the claim said none, the row now says some.
    const db = await env.db();
    await db.updateTable("firm_queue_jobs").set({ has_dependents: 1 }).where("id", "=", ids[0]!).execute();
    const policies = new JobPolicies(new JobRegistry(), silentLogger);
    const recorded = await finishClaimedJobs(database, policies, processId, [jobs[0]!], true, [ids[1]!]);
    expect([...recorded]).toEqual([ids[0]]);
    expect(await startedIds(db)).toEqual([ids[1]]);
  });
});
