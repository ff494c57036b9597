import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";

describeEachDatabase("a connection cut while checked out", (env) => {
  // SQLite has no connection to lose.
  it.runIf(env.dialect !== "sqlite")(
    "fails the transaction using it, does not crash the process, and the pool goes on",
    async () => {
      const firm = env.firm();
      const { db } = await firm.database();
      const admin = await env.db();
      const myId =
        env.dialect === "postgres"
          ? sql<{ id: number }>`SELECT pg_backend_pid() AS id`
          : sql<{ id: number }>`SELECT CONNECTION_ID() AS id`;
      const transaction = db.transaction().execute(async (trx) => {
        const { rows } = await myId.execute(trx);
        const id = Number(rows[0]!.id);
        // Cut it from another connection while this one sits idle in its transaction (no query in
        // flight: the driver can only report the loss as an 'error' event on the connection).
        if (env.dialect === "postgres") await sql`SELECT pg_terminate_backend(${id})`.execute(admin);
        else await sql.raw(`KILL ${id}`).execute(admin);
        await new Promise((resolve) => setTimeout(resolve, 500));
        await sql`SELECT 1`.execute(trx);
      });
      await expect(transaction).rejects.toThrow();
      // The pool replaces the lost connection.
      const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
      expect(Number(rows[0]!.one)).toBe(1);
    },
  );
});
