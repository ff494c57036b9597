import { sql } from "kysely";
import { expect, it } from "vitest";
import type { Db, DialectName } from "../src/database/dialect.js";
import type { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRunningError, type FirmQueue } from "../src/index.js";
import { failClaimedJob, finishClaimedJobs } from "../src/lifecycle/claimed-jobs.js";
import { registerProcess } from "../src/models/process.js";
import { pruneDeadProcesses, removeClaimsOfGoneJobs } from "../src/processes/crash-recovery.js";
import { ProcessPruner } from "../src/processes/process-pruner.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { MIGRATIONS } from "../src/database/migrations/index.js";
import { FirmQueue as FirmQueueClass, silentLogger } from "../src/index.js";
import { countRows, describeEachDatabase, enqueued } from "./support/harness.js";
import { migrateBefore } from "./support/partial-migration.js";
import { createTestDatabase } from "./support/test-database.js";
import { capturingLogger } from "./support/recurring.js";

/*
 * The claims table has no foreign key to the jobs table: integrity is the code's. No path of the
 * library deletes a job that has a claim, and the pruner's pass removes a claim whose job row was
 * deleted by hand, without an error and without coming back to it.
 */

const policiesOf = (firm: FirmQueue) => (firm as unknown as { policies: JobPolicies }).policies;

/** Claims whose job row is gone. */
async function claimsWithoutJob(db: Db): Promise<number[]> {
  const rows = await db
    .selectFrom("firm_queue_claimed_executions as c")
    .leftJoin("firm_queue_jobs as j", "j.id", "c.job_id")
    .select("c.job_id")
    .where("j.id", "is", null)
    .execute();
  return rows.map((row) => Number(row.job_id));
}

/** The tables `table`'s foreign keys reference, as the database reports them. */
async function foreignKeyTargets(db: Db, dialect: DialectName, table: string): Promise<string[]> {
  if (dialect === "sqlite") {
    const { rows } = await sql<{ table: string }>`SELECT "table" FROM pragma_foreign_key_list(${table})`.execute(db);
    return rows.map((row) => row.table);
  }
  if (dialect === "postgres") {
    const { rows } = await sql<{ target: string }>`SELECT confrelid::regclass::text AS target FROM pg_constraint
      WHERE conrelid = ${table}::regclass AND contype = 'f'`.execute(db);
    return rows.map((row) => row.target);
  }
  const { rows } = await sql<{ target: string }>`SELECT REFERENCED_TABLE_NAME AS target
    FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = ${table}`.execute(
    db,
  );
  return rows.map((row) => row.target);
}

describeEachDatabase("claims and their jobs without a foreign key", (env) => {
  it("the claims table references no table; the other execution tables keep their cascade to jobs", async () => {
    const db = await env.db();
    expect(await foreignKeyTargets(db, env.dialect, "firm_queue_claimed_executions")).toEqual([]);
    for (const table of ["ready", "scheduled", "blocked", "throttled", "failed"])
      expect(await foreignKeyTargets(db, env.dialect, `firm_queue_${table}_executions`)).toEqual(["firm_queue_jobs"]);
    // Under a table prefix too: the constraint went by the name the prefixed table gave it.
    const prefixed = env.firm({ tablePrefix: "claims_q_" });
    await prefixed.migrate();
    expect(await foreignKeyTargets(db, env.dialect, "claims_q_claimed_executions")).toEqual([]);
    expect(await foreignKeyTargets(db, env.dialect, "claims_q_ready_executions")).toEqual(["claims_q_jobs"]);
  });

  it("no path that deletes jobs deletes a claimed one: cleanup, queue clear, failed delete, replace, cancel", async () => {
    const firm = env.firm({ preserveFinishedJobs: true });
    firm.defineJob("plain", async () => {}, { queue: "q" });
    const keyed = firm.defineJob("keyed", async (_args: { n: number }) => {}, {
      queue: "q",
      unique: { key: () => "k", mode: "replace" },
    });
    const plain = await enqueued(firm.enqueue("plain", null));
    const replaceable = await enqueued(keyed.enqueue({ n: 1 }));
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "w" }, new Date());
    const claimed = await claimJobs(database, new QueueSelector(["q"]), 10, processId, { startNow: 10 });
    expect(claimed.map((job) => Number(job.id)).sort()).toEqual([plain, replaceable].sort());
    // A job left waiting beside them, so each path has something it does delete.
    const waiting = await enqueued(firm.enqueue("plain", null));

    expect(await firm.clearFinishedJobs({ olderThan: new Date(Date.now() + 3_600_000) })).toBe(0);
    expect(await firm.queues.clear("q")).toBe(1);
    expect(await firm.getJob(waiting)).toBeNull();
    await expect(firm.failedJobs.delete(plain)).rejects.toThrow(JobRunningError);
    expect(await firm.failedJobs.deleteAll()).toBe(0);
    expect(await firm.failedJobs.discardAll()).toBe(0);
    // The key's holder runs: a replace cannot rewrite it, the new job waits its turn instead.
    const replacement = await keyed.enqueue({ n: 2 });
    expect(replacement.id).not.toBe(replaceable);
    expect(await firm.jobs.cancel(plain)).toBe("cancelling");
    expect(await firm.jobs.cancelAll({ queue: "q" })).toBeGreaterThanOrEqual(1);

    const db = await env.db();
    for (const id of [plain, replaceable]) expect((await firm.getJob(id))?.state).toBe("claimed");
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(2);
    expect(await claimsWithoutJob(db)).toEqual([]);
  });

  it("finishing with finished jobs not kept deletes each job together with its claim", async () => {
    const firm = env.firm({ preserveFinishedJobs: false });
    firm.defineJob("plain", async () => {}, { queue: "q" });
    for (let i = 0; i < 3; i++) await enqueued(firm.enqueue("plain", null));
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "w" }, new Date());
    const claimed = await claimJobs(database, new QueueSelector(["q"]), 10, processId, { startNow: 10 });
    expect(claimed).toHaveLength(3);
    // The database's own finish statement (no slot, key, result or dependents to hand on).
    const recorded = await finishClaimedJobs(database, policiesOf(firm), processId, claimed, false);
    expect(recorded.size).toBe(3);
    const db = await env.db();
    expect(await countRows(db, "firm_queue_jobs")).toBe(0);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
  });

  it("a claim whose job row was deleted by hand is removed by the pruner's pass, once, without an error", async () => {
    const firm = env.firm();
    firm.defineJob("plain", async () => {}, { queue: "q" });
    const ids = [
      await enqueued(firm.enqueue("plain", null)),
      await enqueued(firm.enqueue("plain", null)),
      await enqueued(firm.enqueue("plain", null)),
    ];
    const database = await firm.database();
    const policies = policiesOf(firm);
    const alive = await registerProcess(database.db, { kind: "Worker", name: "alive" }, new Date());
    await claimJobs(database, new QueueSelector(["q"]), 3, alive, { startNow: 3 });
    const [gone, kept, failing] = ids as [number, number, number];
    const db = await env.db();
    await db.deleteFrom("firm_queue_jobs").where("id", "in", [gone, failing]).execute();
    expect((await claimsWithoutJob(db)).sort()).toEqual([gone, failing].sort());

    // The worker failing a job whose row is gone: nothing to record, the claim just goes (no error).
    expect(await failClaimedJob(database, policies, failing, alive, new Error("boom"))).toBeNull();
    expect(await claimsWithoutJob(db)).toEqual([gone]);

    const logger = capturingLogger();
    const errors: unknown[] = [];
    const supervisor = await registerProcess(database.db, { kind: "Supervisor", name: "s" }, new Date());
    const pruner = new ProcessPruner(
      database,
      policies,
      { aliveThreshold: 60_000, interval: 60_000, ownProcessId: supervisor, supervisedInProcess: false },
      logger,
      (error) => errors.push(error),
    );
    await pruner.recoverNow();
    await pruner.recoverNow();
    expect(errors).toEqual([]);
    const warnings = logger.lines.filter((line) => line.level === "warn" || line.level === "error");
    expect(warnings).toEqual([
      {
        level: "warn",
        message: "claims whose job row is gone (deleted outside firm-queue) removed",
        fields: { jobIds: [gone] },
      },
    ]);
    expect(await claimsWithoutJob(db)).toEqual([]);
    // The live claim of a job still there is left to its worker.
    expect((await firm.getJob(kept))?.state).toBe("claimed");
    expect(await removeClaimsOfGoneJobs(database)).toEqual([]);
  });

  it("crash recovery of a dead worker whose started claim lost its job row prunes it without an error", async () => {
    const firm = env.firm();
    firm.defineJob("plain", async () => {}, { queue: "q" });
    const gone = await enqueued(firm.enqueue("plain", null));
    const kept = await enqueued(firm.enqueue("plain", null));
    const database = await firm.database();
    const dead = await registerProcess(database.db, { kind: "Worker", name: "dead" }, new Date(Date.now() - 3_600_000));
    await claimJobs(database, new QueueSelector(["q"]), 2, dead, { startNow: 2 });
    const db = await env.db();
    await db.deleteFrom("firm_queue_jobs").where("id", "=", gone).execute();

    const [recovered] = await pruneDeadProcesses(database, policiesOf(firm), 60_000, null);
    // The claim of the job that is gone goes without an attempt; the other fails as the worker died.
    expect(recovered).toMatchObject({ failedJobIds: [kept], requeuedJobIds: [], claimsLeft: 0 });
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
    expect(await firm.getJob(kept)).toMatchObject({ attempts: 1 });
  });

  it("migration 016 drops the foreign key of a database holding claims, keeping every claim as it was", async () => {
    const fresh = await createTestDatabase(env.dialect);
    const firm = new FirmQueueClass({ databaseUrl: fresh.url, logger: silentLogger });
    try {
      const database = await firm.database();
      // The schema as migration 015 left it.
      const before = await migrateBefore(database, env.dialect, "016_claims_without_job_foreign_key");
      expect(await foreignKeyTargets(database.db, env.dialect, "firm_queue_claimed_executions")).toEqual([
        "firm_queue_jobs",
      ]);
      firm.defineJob("plain", async () => {}, { queue: "q" });
      for (let i = 0; i < 4; i++) await enqueued(firm.enqueue("plain", null));
      const processId = await registerProcess(database.db, { kind: "Worker", name: "w" }, new Date());
      await claimJobs(database, new QueueSelector(["q"]), 3, processId, { startNow: 2 });
      const claimsOf = () =>
        database.db
          .selectFrom("firm_queue_claimed_executions")
          .select(["id", "job_id", "process_id", "started_at", "created_at"])
          .orderBy("id")
          .execute();
      // The newest claim goes, so the id sequence is ahead of the rows: it must stay ahead.
      const all = await claimsOf();
      expect(all).toHaveLength(3);
      const newest = Math.max(...all.map((claim) => Number(claim.id)));
      await database.db.deleteFrom("firm_queue_claimed_executions").where("id", "=", newest).execute();
      const kept = await claimsOf();
      expect(kept.filter((claim) => claim.started_at !== null)).toHaveLength(2);

      expect(await firm.migrate()).toEqual(MIGRATIONS.slice(before).map((migration) => migration.version));
      expect(await claimsOf()).toEqual(kept);
      expect(await foreignKeyTargets(database.db, env.dialect, "firm_queue_claimed_executions")).toEqual([]);
      // Both indexes are back: one claim per job, and new claims take ids never handed out.
      const [claim] = kept;
      await expect(
        database.db
          .insertInto("firm_queue_claimed_executions")
          .values({ job_id: claim!.job_id, process_id: processId, created_at: new Date() })
          .execute(),
      ).rejects.toThrow();
      // The fourth job is still ready (the third's claim was the one deleted: it is in no line now).
      const more = await claimJobs(database, new QueueSelector(["q"]), 10, processId);
      expect(more).toHaveLength(1);
      const after = await claimsOf();
      expect(Math.min(...after.slice(kept.length).map((row) => Number(row.id)))).toBeGreaterThan(newest);
      expect(await firm.migrate()).toEqual([]);
    } finally {
      await firm.close();
      await fresh.drop();
    }
  });
});
