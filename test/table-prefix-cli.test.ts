import { afterEach, describe, expect, it } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import { waitFor } from "./support/harness.js";
import { applyScript, tableNames } from "./support/own-driver.js";
import { runCli, spawnCli } from "./support/processes.js";
import { createTestDatabase, testDialects, type TestDatabase } from "./support/test-database.js";

const TABLES = [
  "batch_jobs",
  "batches",
  "blocked_executions",
  "claimed_executions",
  "failed_executions",
  "job_dependencies",
  "job_keys",
  "jobs",
  "pauses",
  "processes",
  "rate_budgets",
  "rate_starts",
  "ready_executions",
  "recurring_executions",
  "recurring_tasks",
  "scheduled_executions",
  "schema_migrations",
  "semaphores",
  "throttled_executions",
];
const prefixed = (prefix: string) => TABLES.map((table) => `${prefix}${table}`);

describe.each(testDialects())("firm-queue CLI with --table-prefix [%s]", (dialect) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it("rejects a bad prefix (flag or variable) before creating anything", async () => {
    database = await createTestDatabase(dialect);
    const url = database.url;
    for (const bad of ["Shop-", "shop q_", "a_very_long_prefix_", "9_"]) {
      const result = await runCli(["migrate", "--database-url", url, "--table-prefix", bad]);
      expect(result.code, bad).toBe(1);
      expect(result.stderr).toContain("--table-prefix must be 1 to 14 characters");
    }
    const fromEnv = await runCli(["migrate", "--database-url", url], { FIRM_QUEUE_TABLE_PREFIX: "x;drop_" });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain("TABLE_PREFIX must be");
    expect(await tableNames(dialect, url)).toEqual([]);
  });

  it("migrates, reports status and prints SQL for its own prefix, beside the default tables", async () => {
    database = await createTestDatabase(dialect);
    const url = database.url;
    const migrated = await runCli(["migrate", "--database-url", url, "--table-prefix", "shop_q_"]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(await tableNames(dialect, url)).toEqual(prefixed("shop_q_"));
    const status = await runCli(["migrate", "--status", "--database-url", url, "--table-prefix", "shop_q_"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("pending: (none)");
    // The default prefix has nothing yet: its status, from the same database, is all pending.
    const defaultStatus = await runCli(["migrate", "--status", "--database-url", url]);
    expect(defaultStatus.code).toBe(1);
    expect(defaultStatus.stdout).toContain("applied: (none)");

    const printed = await runCli(["migrate", "--print-sql", dialect], { FIRM_QUEUE_TABLE_PREFIX: "tool_q_" });
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain("CREATE TABLE IF NOT EXISTS tool_q_jobs");
    expect(printed.stdout).not.toContain("firm_queue_");
    await applyScript(dialect, url, printed.stdout);
    expect(await tableNames(dialect, url)).toEqual([...prefixed("shop_q_"), ...prefixed("tool_q_")].sort());
    const after = await runCli(["migrate", "--status", "--database-url", url, "--table-prefix", "tool_q_"]);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain("pending: (none)");

    const firm = new FirmQueue({ databaseUrl: url, tablePrefix: "tool_q_", logger: silentLogger });
    try {
      firm.defineJob("after-script", async () => undefined);
      await firm.enqueue("after-script", null, { undeclared: true });
      expect(await firm.drain()).toBe(1);
    } finally {
      await firm.close();
    }
  });

  it("start in fork mode runs the prefix's jobs in its children", async () => {
    database = await createTestDatabase(dialect);
    const url = database.url;
    expect((await runCli(["migrate", "--database-url", url, "--table-prefix", "fork_q_"])).code).toBe(0);
    const firm = new FirmQueue({ databaseUrl: url, tablePrefix: "fork_q_", logger: silentLogger });
    try {
      const id = (await firm.enqueue("record", null, { undeclared: true })).id!;
      const started = spawnCli([
        "start",
        "--require",
        "test/fixtures/greeter.ts",
        "--database-url",
        url,
        "--table-prefix",
        "fork_q_",
        "--polling-interval",
        "50ms",
      ]);
      try {
        await waitFor(async () => (await firm.getJob(id))?.state === "finished", 20_000, "the job to finish");
      } finally {
        started.child.kill("SIGTERM");
      }
      const result = await started.finished;
      expect(result.code, result.stderr).toBe(0);
      const { db } = await firm.database();
      expect(await db.selectFrom("firm_queue_processes").select("id").execute()).toEqual([]);
    } finally {
      await firm.close();
    }
  });
});
