import { expect, it } from "vitest";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { finishClaimedJobs } from "../src/lifecycle/claimed-jobs.js";
import { ProcessRowGoneError } from "../src/errors.js";
import { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRegistry } from "../src/definitions/job-registry.js";
import { silentLogger } from "../src/index.js";
import { CLAIMED_JOB_COLUMNS } from "../src/database/claimed-job.js";
import { claimReadyExecutions } from "../src/models/ready-execution.js";
import { toDate } from "../src/database/schema.js";

/*
 * The claim and finish paths as a worker runs them: whichever way the database does them (one
 * statement of its own, or the portable transaction), the same rules hold.
 */
describeEachDatabase("claim and finish statements", (env) => {
  it("a claim passes over ready rows another transaction holds, and claims the rest", async () => {
    const firm = env.firm();
    const job = firm.defineJob("held", async () => {});
    const ids = (await job.enqueueAll([null, null, null])).map((result) => result.id) as number[];
    const holder = await env.firm().database();
    const claimer = await env.firm().database();
    const processId = await registerProcess(claimer.db, { kind: "Worker", name: "claimer" }, new Date());
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // Another claimer's transaction holding the first job's ready row.
    const holding = holder.claimTransaction(async (trx) => {
      await holder.dialect
        .withSkipLocked(trx.selectFrom("firm_queue_ready_executions").select("job_id").where("job_id", "=", ids[0]!))
        .execute();
      locked();
      await released;
    });
    await isLocked;
    const claim = claimJobs(claimer, new QueueSelector("*"), 10, processId);
    if (env.dialect === "sqlite") {
      // SQLite's claimers take the database write lock first: the claim waits for the holder.
      release();
      await holding;
      expect((await claim).map((row) => Number(row.id))).toEqual(ids);
      return;
    }
    // Row locks: the claim must not wait for the holder (a claim without SKIP LOCKED would).
    const outcome = await Promise.race([
      claim,
      new Promise<"blocked">((resolve) => setTimeout(() => resolve("blocked"), 5000)),
    ]);
    release();
    await holding;
    expect(outcome).not.toBe("blocked");
    expect((outcome as Awaited<typeof claim>).map((row) => Number(row.id))).toEqual(ids.slice(1));
    const left = await (await env.db()).selectFrom("firm_queue_ready_executions").select("job_id").execute();
    expect(left.map((row) => Number(row.job_id))).toEqual([ids[0]]);
  });

  it("a claim reads back the columns running a job needs, and no others, its own statement and the portable one alike", async () => {
    const firm = env.firm();
    const job = firm.defineJob("columns", async () => {}, { queue: "columns" });
    const before = Date.now();
    const [first, second] = (await job.enqueueAll([{ n: 1 }, { n: 2 }], { priority: 3 })).map(
      (result) => result.id,
    ) as number[];
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "columns" }, new Date());
    const [ownStatement] = await claimJobs(database, new QueueSelector("*"), 1, processId);
    const [portable] = await database.claimTransaction((trx) =>
      claimReadyExecutions(trx, database.dialect, { exclude: [] }, 1, processId, new Date()),
    );
    for (const [row, id, n] of [
      [ownStatement!, first, 1],
      [portable!, second, 2],
    ] as const) {
      // PostgreSQL's statement hands its rows on as the driver made them, with the claim's two
      // counts; every claim adds whether it marked the job started.
      const columns = Object.keys(row).filter((key) => key !== "picked_count" && key !== "alive");
      expect(columns.sort()).toEqual([...CLAIMED_JOB_COLUMNS, "claim_started"].sort());
      expect(row).toMatchObject({ queue_name: "columns", class_name: "columns", priority: 3, attempts: 0 });
      expect(Number(row.id)).toBe(id);
      expect(JSON.parse(row.arguments!)).toEqual({ n });
      for (const at of [row.created_at, row.scheduled_at!])
        expect(Math.abs(toDate(at).getTime() - before)).toBeLessThan(60_000);
    }
  });

  it("claims nothing, and says so, when the claiming process's row is gone", async () => {
    const firm = env.firm();
    const job = firm.defineJob("orphan", async () => {});
    await job.enqueueAll([null, null]);
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "ghost" }, new Date());
    await database.db.deleteFrom("firm_queue_processes").where("id", "=", processId).execute();
    await expect(claimJobs(database, new QueueSelector("*"), 10, processId)).rejects.toBeInstanceOf(
      ProcessRowGoneError,
    );
    const db = await env.db();
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(2);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
  });

  it("an empty claim by a process without a row is not an error (nothing was there to claim)", async () => {
    const database = await env.firm().database();
    expect(await claimJobs(database, new QueueSelector("*"), 10, 987_654)).toEqual([]);
  });

  it("records only the jobs whose claim this process still holds, kept or deleted", async () => {
    for (const preserve of [true, false]) {
      const firm = env.firm();
      const job = firm.defineJob(`finish-${preserve}`, async () => {});
      const ids = (await job.enqueueAll([null, null, null])).map((result) => result.id) as number[];
      const database = await firm.database();
      const processId = await registerProcess(
        database.db,
        { kind: "Worker", name: `finisher-${preserve}` },
        new Date(),
      );
      const rows = await claimJobs(database, new QueueSelector("*"), 10, processId);
      expect(rows.map((row) => Number(row.id))).toEqual(ids);
      // The second job's claim was taken away and now belongs to another worker (crash recovery
      // judged this process dead, the job went back in line and was claimed again).
      const other = await registerProcess(database.db, { kind: "Worker", name: `other-${preserve}` }, new Date());
      await database.db
        .updateTable("firm_queue_claimed_executions")
        .set({ process_id: other })
        .where("job_id", "=", ids[1]!)
        .execute();
      const recorded = await finishClaimedJobs(
        database,
        new JobPolicies(new JobRegistry(), silentLogger),
        processId,
        rows,
        preserve,
      );
      expect([...recorded].sort((a, b) => a - b)).toEqual([ids[0], ids[2]]);
      const db = await env.db();
      const left = await db
        .selectFrom("firm_queue_jobs")
        .select(["id", "finished_at", "attempts"])
        .where("id", "in", ids)
        .orderBy("id")
        .execute();
      if (preserve) {
        expect(left.map((row) => [Number(row.id), row.finished_at !== null, row.attempts])).toEqual([
          [ids[0], true, 1],
          [ids[1], false, 0],
          [ids[2], true, 1],
        ]);
      } else {
        expect(left.map((row) => Number(row.id))).toEqual([ids[1]]);
      }
      expect(await countRows(db, "firm_queue_claimed_executions")).toBe(1);
      await db.deleteFrom("firm_queue_claimed_executions").execute();
      await db.deleteFrom("firm_queue_jobs").execute();
    }
  });
});
