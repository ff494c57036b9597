import { sql } from "kysely";
import { expect, it } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import { MIGRATIONS } from "../src/database/migrations/index.js";
import { describeEachDatabase } from "./support/harness.js";
import { createTestDatabase } from "./support/test-database.js";
import { runCli } from "./support/processes.js";

const TABLES = [
  "firm_queue_jobs",
  "firm_queue_ready_executions",
  "firm_queue_claimed_executions",
  "firm_queue_scheduled_executions",
  "firm_queue_blocked_executions",
  "firm_queue_failed_executions",
  "firm_queue_semaphores",
  "firm_queue_pauses",
  "firm_queue_processes",
  "firm_queue_recurring_tasks",
  "firm_queue_recurring_executions",
];

describeEachDatabase("migrations", (env) => {
  it("create the eleven tables; running again changes nothing", async () => {
    const firm = env.firm();
    expect(await firm.migrate()).toEqual([]);
    const { db } = await firm.database();
    for (const table of TABLES) {
      await expect(sql.raw(`SELECT COUNT(*) FROM ${table}`).execute(db), table).resolves.toBeDefined();
    }
    const versions = await db.selectFrom("firm_queue_schema_migrations").select("version").execute();
    expect(versions.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
  });

  it("connections are set up for the queue's needs", async () => {
    const { db } = await env.firm().database();
    const first = async (query: string) => Object.values((await sql.raw(query).execute(db)).rows[0] as object)[0];
    if (env.dialect === "sqlite") {
      expect(await first("PRAGMA journal_mode")).toBe("wal");
      expect(await first("PRAGMA busy_timeout")).toBe(5000);
      expect(await first("PRAGMA foreign_keys")).toBe(1);
      expect(await first("PRAGMA synchronous")).toBe(1);
    } else if (env.dialect === "postgres") {
      // BIGINT ids and counts come back as numbers, not strings.
      expect(await first("SELECT 9007199254740991::bigint")).toBe(9007199254740991);
    } else {
      expect(await first("SELECT @@SESSION.tx_isolation")).toBe("READ-COMMITTED");
    }
  });

  it("the jobs' indexes on active_job_id and job_key hold only the rows where those are set (MariaDB: the whole table)", async () => {
    const firm = env.firm();
    const unique = firm.defineJob("keyed", async (_args: { n: number }) => {}, {
      unique: { key: (args) => `k${args.n}` },
    });
    await firm.defineJob("plain", async () => {}).enqueue(null);
    await unique.enqueue({ n: 1 });
    const { db } = await firm.database();
    const definition = async (index: string): Promise<string> => {
      const query =
        env.dialect === "sqlite"
          ? sql<{ text: string }>`SELECT sql AS text FROM sqlite_master WHERE type = 'index' AND name = ${index}`
          : env.dialect === "postgres"
            ? sql<{ text: string }>`SELECT indexdef AS text FROM pg_indexes WHERE indexname = ${index}`
            : sql<{ text: string }>`SELECT GROUP_CONCAT(column_name) AS text FROM information_schema.statistics
                WHERE table_schema = DATABASE() AND index_name = ${index}`;
      return ((await query.execute(db)).rows[0]?.text ?? "").replace(/\s+/g, " ");
    };
    for (const column of ["active_job_id", "job_key"]) {
      const text = await definition(`index_firm_queue_jobs_on_${column}`);
      if (env.dialect === "mysql") expect(text).toBe(column);
      else expect(text).toMatch(new RegExp(`WHERE \\(?${column} IS NOT NULL\\)?`));
    }
    // The key still finds its job.
    const keyed = await db.selectFrom("firm_queue_jobs").select("class_name").where("job_key", "=", "k1").execute();
    expect(keyed).toEqual([{ class_name: "keyed" }]);
  });

  it("deleting a job cascades to its executions", async () => {
    const firm = env.firm();
    const job = firm.defineJob("cascade", async () => {});
    const id = (await job.enqueue(null)).id;
    const { db } = await firm.database();
    await db.deleteFrom("firm_queue_jobs").where("id", "=", id).execute();
    const left = await db.selectFrom("firm_queue_ready_executions").select("id").where("job_id", "=", id).execute();
    expect(left).toEqual([]);
  });

  it("a job has at most one row per execution table (unique job_id)", async () => {
    const firm = env.firm();
    const job = firm.defineJob("unique", async () => {});
    const id = (await job.enqueue(null)).id;
    const { db } = await firm.database();
    await expect(
      db
        .insertInto("firm_queue_ready_executions")
        .values({ job_id: id, queue_name: "default", priority: 0, created_at: new Date() })
        .execute(),
    ).rejects.toThrow();
  });

  it("concurrent migrators, in one process and in several, leave one consistent schema", async () => {
    const fresh = await createTestDatabase(env.dialect);
    try {
      const instances = Array.from(
        { length: 3 },
        () => new FirmQueue({ databaseUrl: fresh.url, logger: silentLogger }),
      );
      const [inProcess, cli1, cli2] = await Promise.all([
        Promise.all(instances.map((firm) => firm.migrate())),
        runCli(["migrate", "--database-url", fresh.url]),
        runCli(["migrate", "--database-url", fresh.url]),
      ]);
      expect(cli1.code, cli1.stderr).toBe(0);
      expect(cli2.code, cli2.stderr).toBe(0);
      // Exactly one migrator applied each migration; the others found nothing to do.
      const appliedByCli = [cli1, cli2].filter((result) => result.stdout.includes("Applied")).length;
      const appliedInProcess = inProcess.filter((applied) => applied.length > 0).length;
      expect(appliedByCli + appliedInProcess).toBe(1);
      const { db } = await instances[0]!.database();
      const versions = await db.selectFrom("firm_queue_schema_migrations").select("version").execute();
      expect(versions.length).toBe(MIGRATIONS.length);
      await Promise.all(instances.map((firm) => firm.close()));
    } finally {
      await fresh.drop();
    }
  });
});
