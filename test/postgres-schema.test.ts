import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError, FirmQueue, silentLogger } from "../src/index.js";
import { MIGRATIONS } from "../src/database/migrations/index.js";
import { TestEnv, countRows, waitFor } from "./support/harness.js";
import { testDialects } from "./support/test-database.js";

it("the schema option is refused for other databases and for handles, and must be a plain identifier", async () => {
  const sqlite = new FirmQueue({ databaseUrl: "sqlite::memory:", schema: "jobs", logger: silentLogger });
  await expect(sqlite.migrate()).rejects.toThrow(/schema option is for PostgreSQL/);
  await sqlite.close();
  expect(() => new FirmQueue({ databaseUrl: "postgres://app@db/app", schema: "jobs; DROP TABLE x" })).toThrow(
    ConfigurationError,
  );
  const pool = { connect: async () => undefined, end: async () => undefined, totalCount: 0, idleCount: 0 };
  const handle = new FirmQueue({ database: pool, schema: "jobs", logger: silentLogger });
  await expect(handle.migrate()).rejects.toThrow(/set its search_path/);
});

describe.runIf(testDialects().includes("postgres"))("a PostgreSQL schema for firm-queue's tables", () => {
  const env = new TestEnv("postgres");
  const open: FirmQueue[] = [];
  beforeAll(() => env.setup());
  afterEach(async () => {
    await Promise.all(open.splice(0).map((firm) => firm.close()));
    await env.reset();
  });
  afterAll(() => env.teardown());

  const inSchema = (schema: string) => {
    const firm = new FirmQueue({ databaseUrl: env.url, schema, logger: silentLogger });
    open.push(firm);
    return firm;
  };

  it("migrate creates the schema and its tables, and jobs live there, apart from the public ones", async () => {
    const firm = inSchema("jobs");
    expect(await firm.migrate()).toHaveLength(MIGRATIONS.length);
    const ran: number[] = [];
    const job = firm.defineJob("in-schema", async (args: { n: number }) => void ran.push(args.n));
    await job.enqueue({ n: 1 });
    expect(await firm.drain()).toBe(1);
    expect(ran).toEqual([1]);

    const client = new pg.Client({ connectionString: env.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        "SELECT table_schema FROM information_schema.tables WHERE table_name = 'firm_queue_jobs' ORDER BY table_schema",
      );
      expect(rows.map((row) => row.table_schema)).toEqual(["jobs", "public"]);
      const { rows: jobs } = await client.query("SELECT class_name FROM jobs.firm_queue_jobs");
      expect(jobs).toEqual([{ class_name: "in-schema" }]);
    } finally {
      await client.end();
    }
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0); // the public schema's table
  });

  it("workers in the schema wake on another instance's enqueue (the NOTIFY trigger lives there too)", async () => {
    const worker = inSchema("wake");
    await worker.migrate();
    const ran: number[] = [];
    worker.defineJob("remote", async (_args, context) => void ran.push(context.jobId));
    const supervisor = await worker.start({ workers: [{ pollingInterval: 60_000 }], dispatchers: [] });
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const id = (await inSchema("wake").enqueue("remote", null, { undeclared: true })).id;
      await waitFor(() => ran.includes(id!), 15_000, "the job to run");
    } finally {
      await supervisor.stop();
    }
  });
});
