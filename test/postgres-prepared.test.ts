import { sql } from "kysely";
import pg from "pg";
import { expect, it } from "vitest";
import type { Database } from "../src/database/connection.js";
import { finishClaimedJobs } from "../src/lifecycle/claimed-jobs.js";
import { registerProcess } from "../src/models/process.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRegistry } from "../src/definitions/job-registry.js";
import { FirmQueue, fromPg, silentLogger } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";
import { executePrepared } from "../src/database/postgres-prepared.js";
import { pgConnection } from "../src/database/clients.js";

/*
 * PostgreSQL's worker statements (claim, finish, enqueue in autocommit) go as named statements,
 * parsed once per connection. These tests hold the pool to one connection, so what the session
 * has prepared can be read back from pg_prepared_statements on that same connection.
 */
describeEachDatabase(
  "named statements on the hot path",
  (env) => {
    const prepared = async (database: Database): Promise<string[]> => {
      const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(
        database.db,
      );
      return rows.map((row) => row.statement.replace(/\s+/g, " ").trim());
    };
    const startsWith = (texts: string[], start: string) => texts.filter((text) => text.startsWith(start)).length;

    /** Enqueue two jobs one by one, claim them and record them finished; returns the ids finished. */
    const roundTrip = async (database: Database, job: { enqueue(args: null): Promise<unknown> }) => {
      await job.enqueue(null);
      await job.enqueue(null);
      const processId = await registerProcess(database.db, { kind: "Worker", name: "named" }, new Date());
      const rows = await claimJobs(database, new QueueSelector("*"), 10, processId);
      const policies = new JobPolicies(new JobRegistry(), silentLogger);
      const finished = await finishClaimedJobs(database, policies, processId, rows, true);
      return [...finished];
    };

    /** Two round trips, then each hot statement is prepared once on the firm's one connection. */
    const preparesEachHotStatementOnce = async (firm: FirmQueue) => {
      const job = firm.defineJob("named", async () => {});
      const database = await firm.database();
      expect(await roundTrip(database, job)).toHaveLength(2);
      expect(await roundTrip(database, job)).toHaveLength(2);
      const texts = await prepared(database);
      expect(startsWith(texts, "WITH picked AS")).toBe(1);
      expect(startsWith(texts, "WITH removed AS")).toBe(1);
      expect(startsWith(texts, "WITH inserted AS")).toBe(1);
    };

    /** The server forgets every statement while the client still believes them parsed, as when a pooler gives it another server connection. */
    const carriesOnUnnamedOnceStatementsAreLost = async (firm: FirmQueue) => {
      const job = firm.defineJob("lost", async () => {});
      const database = await firm.database();
      expect(await roundTrip(database, job)).toHaveLength(2);
      await sql`DEALLOCATE ALL`.execute(database.db);
      expect(await roundTrip(database, job)).toHaveLength(2);
      expect(await roundTrip(database, job)).toHaveLength(2);
      expect(await prepared(database)).toEqual([]);
    };

    it("claims, finishes and enqueues through statements the connection prepared once", async () => {
      await preparesEachHotStatementOnce(env.firm({ poolSize: 1 }));
    });

    it("a statement run inside a transaction goes unnamed, so a pooler losing it could not abort the transaction", async () => {
      const database = await env.firm({ poolSize: 1 }).database();
      await database.db.transaction().execute(async (trx) => {
        await executePrepared(trx, sql`SELECT 'inside' AS place`);
      });
      await executePrepared(database.db, sql`SELECT 'outside' AS place`);
      const texts = await prepared(database);
      expect(startsWith(texts, "SELECT 'inside'")).toBe(0);
      expect(startsWith(texts, "SELECT 'outside'")).toBe(1);
    });

    it("when the server connection has lost a statement (as behind a transaction pooler), it is sent again unnamed, and naming stays off", async () => {
      await carriesOnUnnamedOnceStatementsAreLost(env.firm({ poolSize: 1 }));
    });

    /** An application's pg.Pool of one connection, and a FirmQueue on it; both closed by `use`. */
    const onApplicationPool = async (use: (firm: FirmQueue, pool: pg.Pool) => Promise<void>) => {
      const pool = new pg.Pool({ connectionString: env.url, max: 1 });
      const firm = new FirmQueue({ database: pool, logger: silentLogger });
      try {
        await use(firm, pool);
      } finally {
        await firm.close();
        await pool.end();
      }
    };
    it("an application's pg.Pool handle gets the same named statements", async () => {
      await onApplicationPool((firm) => preparesEachHotStatementOnce(firm));
    });

    it("on an application's pg.Pool, a lost statement is sent again unnamed and naming stays off", async () => {
      await onApplicationPool((firm) => carriesOnUnnamedOnceStatementsAreLost(firm));
    });

    it("an enqueue inside the application's own transaction goes unnamed", async () => {
      await onApplicationPool(async (firm, pool) => {
        const job = firm.defineJob("inside", async () => {});
        await firm.database(); // opened first: the pool's one connection is the transaction's below
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          const { id } = await job.enqueue(null, { transaction: fromPg(client) });
          await client.query("COMMIT");
          expect(
            await (await env.db()).selectFrom("firm_queue_jobs").select("id").where("id", "=", id!).execute(),
          ).toHaveLength(1);
        } finally {
          client.release();
        }
        expect(await prepared(await firm.database())).toEqual([]);
      });
    });

    it("a client of the application's transaction never names a statement; a pooled client does", async () => {
      const database = await env.firm().database();
      const registered = sql`SELECT 'registered' AS text`;
      await executePrepared(database.db, registered);
      const text = registered.compile(database.db).sql;
      const sent: Array<{ name?: string }> = [];
      const client = {
        query: async (statement: { name?: string }) => {
          sent.push(statement);
          return { rows: [] };
        },
      };
      await (await pgConnection(client)).query(text, []);
      await (await pgConnection(client, { release: () => {}, naming: { on: true } })).query(text, []);
      expect(sent.map((statement) => statement.name)).toEqual([undefined, expect.stringMatching(/^firm_queue_/)]);
    });
  },
  ["postgres"],
);
