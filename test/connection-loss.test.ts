import { sql } from "kysely";
import { expect, it } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import { appHandles } from "./support/app-handles.js";
import { describeEachDatabase } from "./support/harness.js";

// SQLite has no connection to lose.
describeEachDatabase(
  "a connection cut while checked out",
  (env) => {
    it("fails the transaction using it, does not crash the process, and the pool goes on", async () => {
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
    });

    // The application's pool is the application's, but a connection firm-queue has checked out of it
    // carries none of the pool's listeners: losing it then must not crash the application either.
    for (const { name, open } of appHandles(env.dialect, () => env.url).filter((each) => each.name !== "Kysely")) {
      it(`${name}: a connection of the application's pool cut while firm-queue holds it fails only that transaction`, async () => {
        const app = open();
        try {
          const firm = new FirmQueue({ database: app.handle, logger: silentLogger });
          const { db } = await firm.database();
          const admin = await env.db();
          const transaction = db.transaction().execute(async (trx) => {
            const { rows } = await myId(env.dialect).execute(trx);
            await cut(env.dialect, Number(rows[0]!.id), admin);
            await new Promise((resolve) => setTimeout(resolve, 500));
            await sql`SELECT 1`.execute(trx);
          });
          await expect(transaction).rejects.toThrow();
          const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
          expect(Number(rows[0]!.one)).toBe(1);
          await firm.close();
          await app.stillOpen();
        } finally {
          await app.close();
        }
      });
    }
  },
  ["postgres", "mysql"],
);

const myId = (dialect: string) =>
  dialect === "postgres"
    ? sql<{ id: number }>`SELECT pg_backend_pid() AS id`
    : sql<{ id: number }>`SELECT CONNECTION_ID() AS id`;

/** End connection `id` from another connection, as an administrator or a crashing proxy would. */
async function cut(dialect: string, id: number, admin: Parameters<ReturnType<typeof myId>["execute"]>[0]) {
  if (dialect === "postgres") await sql`SELECT pg_terminate_backend(${id})`.execute(admin);
  else await sql.raw(`KILL ${id}`).execute(admin);
}
