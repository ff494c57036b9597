import { MIGRATIONS } from "../src/database/migrations/index.js";
import { sql } from "kysely";
import { expect, it } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import { createTables } from "../src/database/migrations/001-create-tables.js";
import { describeEachDatabase } from "./support/harness.js";
import { createTestDatabase } from "./support/test-database.js";

describeEachDatabase("migration 002_add_jobs_last_error", (env) => {
  it("upgrades a database created by 001 alone, keeping its jobs", async () => {
    const fresh = await createTestDatabase(env.dialect);
    const firm = new FirmQueue({ databaseUrl: fresh.url, logger: silentLogger });
    try {
      const database = await firm.database();
      // The schema as the first release left it: 001 only, with a job in it.
      await sql
        .raw(
          `CREATE TABLE firm_queue_schema_migrations (version VARCHAR(255) NOT NULL PRIMARY KEY, applied_at ${env.dialect === "sqlite" ? "TEXT" : env.dialect === "postgres" ? "TIMESTAMP(6) WITH TIME ZONE" : "DATETIME(6)"} NOT NULL)`,
        )
        .execute(database.db);
      for (const step of createTables.steps) {
        if (!("createTable" in step)) throw new Error("001 is expected to create tables only");
        for (const statement of database.adapter.ddl.createTable(step.createTable))
          await sql.raw(statement).execute(database.db);
      }
      await database.db
        .insertInto("firm_queue_schema_migrations")
        .values({ version: createTables.version, applied_at: new Date() })
        .execute();
      const job = firm.defineJob("old", async () => {
        throw new Error("after the upgrade");
      });
      await sql
        .raw(
          "INSERT INTO firm_queue_jobs (queue_name, class_name, arguments, priority, attempts, scheduled_at, created_at, updated_at) VALUES ('default', 'old', 'null', 0, 0, NULL, '2024-01-01 00:00:00', '2024-01-01 00:00:00')",
        )
        .execute(database.db);
      expect(await firm.migrate()).toEqual(MIGRATIONS.slice(1).map((migration) => migration.version));
      const [row] = await database.db.selectFrom("firm_queue_jobs").select(["id", "last_error"]).execute();
      expect(row?.last_error).toBeNull();
      // New jobs record their last error in the new column.
      const id = (await job.enqueue(null)).id;
      await firm.drain();
      expect((await firm.getJob(id))?.lastError).toMatchObject({ message: "after the upgrade" });
      expect(await firm.migrate()).toEqual([]);
    } finally {
      await firm.close();
      await fresh.drop();
    }
  });
});
