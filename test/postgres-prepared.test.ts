import { sql } from "kysely";
import { expect, it } from "vitest";
import type { Database } from "../src/database/connection.js";
import { finishClaimedJobs } from "../src/lifecycle/claimed-jobs.js";
import { registerProcess } from "../src/models/process.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRegistry } from "../src/definitions/job-registry.js";
import { silentLogger } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";
import { executePrepared } from "../src/database/postgres-prepared.js";

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

    it("claims, finishes and enqueues through statements the connection prepared once", async () => {
      const firm = env.firm({ poolSize: 1 });
      const job = firm.defineJob("named", async () => {});
      const database = await firm.database();
      expect(await roundTrip(database, job)).toHaveLength(2);
      expect(await roundTrip(database, job)).toHaveLength(2);
      const texts = await prepared(database);
      expect(startsWith(texts, "WITH picked AS")).toBe(1);
      expect(startsWith(texts, "WITH removed AS")).toBe(1);
      expect(startsWith(texts, "WITH inserted AS")).toBe(1);
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
      const firm = env.firm({ poolSize: 1 });
      const job = firm.defineJob("lost", async () => {});
      const database = await firm.database();
      expect(await roundTrip(database, job)).toHaveLength(2);
      // The server forgets every statement; the client still believes them parsed, as it would
      // when a pooler gives it another server connection.
      await sql`DEALLOCATE ALL`.execute(database.db);
      expect(await roundTrip(database, job)).toHaveLength(2);
      expect(await roundTrip(database, job)).toHaveLength(2);
      expect(await prepared(database)).toEqual([]);
    });
  },
  ["postgres"],
);
