import { afterEach, describe, expect, it } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import { SchemaOutOfDateError } from "../src/database/schema-version.js";
import { applyScript } from "./support/own-driver.js";
import { runCli } from "./support/processes.js";
import { createTestDatabase, testDialects, type TestDatabase } from "./support/test-database.js";

// Fresh, unmigrated databases: each test makes its own.
describe.each(testDialects())("migrations applied by another tool [%s]", (dialect) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it("--status lists pending migrations, start refuses an old schema, and the --print-sql script brings it up to date", async () => {
    database = await createTestDatabase(dialect);
    const url = database.url;
    const before = await runCli(["migrate", "--status", "--database-url", url]);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain("applied: (none)");
    expect(before.stdout).toContain("pending: 001");

    const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger });
    firm.defineJob("after-script", async () => undefined);
    await expect(firm.start()).rejects.toThrow(SchemaOutOfDateError);
    await expect(firm.start()).rejects.toThrow(/firm-queue migrate --print-sql/);

    const printed = await runCli(["migrate", "--print-sql", "--database-url", url]);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain("CREATE TABLE IF NOT EXISTS firm_queue_jobs");
    // Printing connects to nothing: the same script comes out for a URL no server answers.
    const offline = await runCli(["migrate", "--print-sql", dialect]);
    expect(offline.stdout).toBe(printed.stdout);
    await applyScript(dialect, url, printed.stdout);

    const after = await runCli(["migrate", "--status", "--database-url", url]);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain("pending: (none)");
    expect(await firm.migrate()).toEqual([]);
    const supervisor = await firm.start({ workers: [{ pollingInterval: 50 }], dispatchers: [] });
    await supervisor.stop();
    await firm.enqueue("after-script", null);
    expect(await firm.drain()).toBe(1);
    await firm.close();
  });
});
