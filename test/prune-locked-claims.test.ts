import { expect, it } from "vitest";
import type { JobPolicies } from "../src/definitions/job-policies.js";
import { failOrphanedClaims, pruneDeadProcesses } from "../src/processes/crash-recovery.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { claimForProcess, insertForeignProcess } from "./support/foreign-claims.js";

// A host cut off in the middle of a transaction keeps that transaction's row locks until the
// server drops its connection. The pruner, passing locked claims by (SKIP LOCKED), used to remove
// the process row anyway, and the orphan sweep failed those claims later with another error
// (ProcessMissingError) than their siblings got (ProcessPrunedError). SQLite has no row locks: a
// transaction holds the whole database, so the pruner waits for it and never meets a locked claim.
describeEachDatabase(
  "pruning a process whose claims are locked",
  (env) => {
    it("fails every claim with ProcessPrunedError, whichever pass or path gets to it, and removes the row last", async () => {
      const firm = env.firm();
      const policies = (firm as unknown as { policies: JobPolicies }).policies;
      const database = await firm.database();
      const db = await env.db();
      const [free, locked] = await Promise.all(
        [0, 1].map(() => enqueued(firm.enqueue("elsewhere", null, { undeclared: true }))),
      );
      const dead = await insertForeignProcess(db, 60_000);
      await claimForProcess(db, free!, dead);
      await claimForProcess(db, locked!, dead);

      // The cut-off host's transaction, still open on the server: it holds the claim row's lock.
      const holder = env.firm();
      let release!: () => void;
      let locking!: () => void;
      const lockTaken = new Promise<void>((resolve) => (locking = resolve));
      const held = (await holder.database()).db.transaction().execute(async (trx) => {
        await trx
          .selectFrom("firm_queue_claimed_executions")
          .select("job_id")
          .where("job_id", "=", locked!)
          .forUpdate()
          .execute();
        locking();
        await new Promise<void>((resolve) => (release = resolve));
      });
      await lockTaken;

      const first = await pruneDeadProcesses(database, policies, 10_000, null);
      expect(first.map(({ process, failedJobIds, claimsLeft }) => [process.id, failedJobIds, claimsLeft])).toEqual([
        [dead, [free], 1],
      ]);
      // The row stays while a claim of it is left, so the orphan sweep does not take that claim.
      expect(await failOrphanedClaims(database, policies)).toEqual([]);
      expect(await firm.getJob(locked!)).toMatchObject({ state: "claimed" });
      expect(
        (await db.selectFrom("firm_queue_processes").select("id").execute()).map((row) => Number(row.id)),
      ).toContain(dead);

      // The server drops the cut-off connection: its lock goes, and the next pass fails the claim.
      release();
      await held;
      const second = await pruneDeadProcesses(database, policies, 10_000, null);
      expect(second.map(({ process, failedJobIds, claimsLeft }) => [process.id, failedJobIds, claimsLeft])).toEqual([
        [dead, [locked], 0],
      ]);
      for (const id of [free, locked]) {
        expect(await firm.getJob(id!), `job ${id}`).toMatchObject({
          state: "failed",
          attempts: 1,
          error: { name: "ProcessPrunedError" },
        });
      }
      expect(
        (await db.selectFrom("firm_queue_processes").select("id").execute()).map((row) => Number(row.id)),
      ).not.toContain(dead);
    });
  },
  ["postgres", "mysql"],
);
