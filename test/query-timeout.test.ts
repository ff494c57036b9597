// queryTimeout on the server databases: a statement that gets no answer in time fails with
// DatabaseTimeoutError, its connection is thrown away (its late answer must never reach another
// query), and the pool goes on with a fresh one. A row lock held by another connection stands in
// for a silent network here; test/multi-host.test.ts cuts a real one. SQLite has no network and
// no pool: its connection is not guarded.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import { DatabaseTimeoutError } from "../src/errors.js";
import { registerProcess } from "../src/models/process.js";
import { createTestDatabase, testDialects, type TestDatabase } from "./support/test-database.js";

const servers = testDialects().filter((dialect) => dialect !== "sqlite");

describe.skipIf(servers.length === 0).each(servers.length > 0 ? servers : (["postgres"] as const))(
  "queryTimeout [%s]",
  (dialect) => {
    let database: TestDatabase;
    const open: FirmQueue[] = [];
    beforeAll(async () => {
      database = await createTestDatabase(dialect);
      const admin = new FirmQueue({ databaseUrl: database.url, logger: silentLogger });
      open.push(admin);
      await admin.migrate();
    });
    afterAll(async () => {
      await Promise.all(open.map((firm) => firm.close()));
      await database?.drop();
    });

    it("fails a statement that gets no answer in time, and the pool's next statements get right answers on a fresh connection", async () => {
      const holder = new FirmQueue({ databaseUrl: database.url, logger: silentLogger });
      const waiter = new FirmQueue({
        databaseUrl: database.url,
        logger: silentLogger,
        queryTimeout: "300ms",
        poolSize: 1,
      });
      open.push(holder, waiter);
      const holderDb = (await holder.database()).db;
      const waiterDb = (await waiter.database()).db;
      const id = await registerProcess(holderDb, { kind: "Worker", name: "locked" }, new Date());
      let releaseLock!: () => void;
      const locked = new Promise<void>((resolve) => (releaseLock = resolve));
      let lockTaken!: () => void;
      const taken = new Promise<void>((resolve) => (lockTaken = resolve));
      const holding = holderDb.transaction().execute(async (trx) => {
        await trx.updateTable("firm_queue_processes").set({ pid: 1 }).where("id", "=", id).execute();
        lockTaken();
        await locked;
      });
      await taken;
      const started = Date.now();
      const blocked = waiterDb.updateTable("firm_queue_processes").set({ pid: 2 }).where("id", "=", id).execute();
      await expect(blocked).rejects.toBeInstanceOf(DatabaseTimeoutError);
      expect(Date.now() - started).toBeLessThan(5000);
      releaseLock();
      await holding;
      // Had the connection been kept, the blocked UPDATE's late answer could be read as the answer
      // to one of these; each must see exactly its own result.
      for (let round = 0; round < 5; round++) {
        const row = await waiterDb
          .selectFrom("firm_queue_processes")
          .select(["id", "name"])
          .where("id", "=", id)
          .executeTakeFirstOrThrow();
        expect(row).toEqual({ id, name: "locked" });
        const none = await waiterDb.selectFrom("firm_queue_processes").select("id").where("id", "=", -1).execute();
        expect(none).toEqual([]);
      }
    }, 30_000);
  },
);
