import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { claimWithinBudgets } from "../src/lifecycle/budget-claim.js";
import { registerProcess } from "../src/models/process.js";
import type { Db, DialectName } from "../src/database/dialect.js";

/*
 * A budget claim reads the few waiting jobs it takes, not every job waiting for the budget. On
 * PostgreSQL, with no statistics yet on the waiting table (just filled), the planner read and
 * sorted all of a budget's waiting jobs to take the first few, and scanned them all again to
 * delete those: each claim cost time in proportion to the jobs waiting. The rows the claim
 * transaction read are counted by the server: PostgreSQL's statistics of the transaction
 * (pg_stat_xact_user_tables), MariaDB's handler counters of the session. SQLite keeps no such
 * count.
 */
const WAITING = 5000;

/** Rows read so far: of the waiting table in this transaction (PostgreSQL), by this session (MariaDB). */
async function rowsRead(trx: Db, dialect: DialectName): Promise<number> {
  if (dialect === "postgres") {
    const { rows } = await sql<{ read: string | number | null }>`
      SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0) AS read
      FROM pg_stat_xact_user_tables WHERE relname = 'firm_queue_throttled_executions'`.execute(trx);
    return Number(rows[0]?.read ?? 0);
  }
  const { rows } = await sql<{ Variable_name: string; Value: string }>`
    SHOW SESSION STATUS LIKE 'Handler_read%'`.execute(trx);
  return rows.reduce((sum, row) => sum + Number(row.Value), 0);
}

describeEachDatabase(
  "budget claim reads",
  (env) => {
    it(`takes 5 of ${WAITING} jobs waiting for a budget reading only a few rows`, async () => {
      const firm = env.firm();
      const job = firm.defineJob("metered", async () => {}, { rateLimit: { limit: 5, period: "1s" } });
      for (let i = 0; i < WAITING; i += 1000) await job.enqueueAll(Array.from({ length: 1000 }, () => null));
      const database = await firm.database();
      const processId = await registerProcess(database.db, { kind: "Worker", name: "w" }, database.clock.now());
      const { taken, read } = await database.claimTransaction(async (trx) => {
        const before = await rowsRead(trx, env.dialect);
        const claim = await claimWithinBudgets(trx, database.dialect, { all: true }, [], 10, processId, () =>
          database.clock.now(),
        );
        return { taken: claim.jobs.length, read: (await rowsRead(trx, env.dialect)) - before };
      });
      expect(taken).toBe(5);
      expect(read).toBeLessThan(200);
    });
  },
  ["postgres", "mysql"],
);
