import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import type { Database } from "../src/database/connection.js";
import type { Db } from "../src/database/dialect.js";
import type { TestEnv } from "./support/harness.js";

/*
 * A claim locks the ready rows it takes and not the rest of the backlog. On MariaDB a claim from
 * every queue once read the whole ready table through the wrong index to sort it, and held every
 * ready row it read until it committed. Each test stalls a claim of the first five jobs of a
 * 300-job backlog inside its transaction (another transaction holds an uncommitted claim of the
 * fifth job, so the claim's insert waits) and looks at what the stalled claim holds. SQLite
 * serializes claimers with its write lock instead.
 */
const BACKLOG = 300;

interface Stalled {
  readonly ids: number[];
  readonly db: Db;
  readonly firstClaim: Promise<{ id: number | string }[]>;
  /** Roll the holder back; the first claim then completes. */
  readonly release: () => Promise<void>;
}

async function stallAClaim(env: TestEnv, waiting: (db: Db) => Promise<boolean>): Promise<Stalled> {
  const firm = env.firm();
  const job = firm.defineJob("footprint", async () => {});
  const ids = (await job.enqueueAll(Array.from({ length: BACKLOG }, () => null))).map((result) => Number(result.id));
  const holder: Database = await env.firm().database();
  const first = await env.firm().database();
  const at = new Date();
  const holderId = await registerProcess(holder.db, { kind: "Worker", name: "holder" }, at);
  const firstId = await registerProcess(first.db, { kind: "Worker", name: "first" }, at);
  let rollBack!: () => void;
  const rolledBack = new Promise<void>((resolve) => (rollBack = resolve));
  let inserted!: () => void;
  const isInserted = new Promise<void>((resolve) => (inserted = resolve));
  const holding = holder
    .claimTransaction(async (trx) => {
      await trx
        .insertInto("firm_queue_claimed_executions")
        .values({ job_id: ids[4]!, process_id: holderId, created_at: at })
        .execute();
      inserted();
      await rolledBack;
      throw new Error("roll back");
    })
    .catch(() => undefined);
  await isInserted;
  const firstClaim = claimJobs(first, new QueueSelector("*"), 5, firstId);
  const db = await env.db();
  await waitFor(() => waiting(db), 20_000, "the first claim to wait for the holder");
  return {
    ids,
    db,
    firstClaim,
    release: async () => {
      rollBack();
      await holding;
    },
  };
}

describeEachDatabase(
  "a claim's lock footprint",
  (env) => {
    it("a second claimer takes the next jobs while a first claim is still in its transaction", async () => {
      const stalled = await stallAClaim(env, async (db) => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db);
        return rows[0]!.n > 0;
      });
      const second = await env.firm().database();
      const secondId = await registerProcess(second.db, { kind: "Worker", name: "second" }, new Date());
      const secondClaim = claimJobs(second, new QueueSelector("*"), 5, secondId);
      const outcome = await Promise.race([
        secondClaim,
        new Promise<"blocked">((resolve) => setTimeout(() => resolve("blocked"), 10_000)),
      ]);
      await stalled.release();
      expect(outcome).not.toBe("blocked");
      expect((outcome as Awaited<typeof secondClaim>).map((row) => Number(row.id))).toEqual(stalled.ids.slice(5, 10));
      expect((await stalled.firstClaim).map((row) => Number(row.id))).toEqual(stalled.ids.slice(0, 5));
    });
  },
  // MariaDB: a second claim would wait anyway, for the table's AUTO-INC lock, which an
  // INSERT … SELECT holds until it ends (innodb_autoinc_lock_mode=1, the default); see below.
  ["postgres"],
);

describeEachDatabase(
  "a claim's lock footprint",
  (env) => {
    it("a claim stalled in its transaction has locked the rows it takes, not the backlog", async () => {
      let rowsLocked = 0;
      const stalled = await stallAClaim(env, async (db) => {
        // Stalled: the claim's transaction has sat in its insert for a second (without the holder
        // it takes milliseconds). InnoDB reports it as waiting for a lock (only the insert can
        // wait: the locking read skips what is locked), or, while it checks the holder's
        // uncommitted claim of the same job, sometimes as running that insert. Inside the claim's
        // block the statement INNODB_TRX shows lags behind (an earlier statement of the block,
        // for as long as the stall lasts), so the connection's own current statement
        // (PROCESSLIST.INFO) is read too; any of the three signs will do.
        const { rows } = await sql<{ locked: number }>`SELECT t.trx_rows_locked AS locked
          FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
          WHERE p.DB = DATABASE()
            AND (t.trx_state = 'LOCK WAIT' OR t.trx_query LIKE '%INSERT INTO firm_queue_claimed_executions%'
              OR p.INFO LIKE '%INSERT INTO firm_queue_claimed_executions%')
            AND t.trx_started < NOW() - INTERVAL 1 SECOND`.execute(db);
        if (rows.length === 0) return false;
        rowsLocked = Number(rows[0]!.locked);
        return true;
      });
      await stalled.release();
      expect((await stalled.firstClaim).map((row) => Number(row.id))).toEqual(stalled.ids.slice(0, 5));
      // The ready rows it has read, its process row and the claims it has inserted: a handful,
      // never the 300 ready rows.
      expect(rowsLocked).toBeGreaterThan(0);
      expect(rowsLocked).toBeLessThan(30);
    });
  },
  ["mysql"],
);
