import type { EnqueueResult } from "../../src/lifecycle/enqueue-result.js";
import { afterAll, afterEach, beforeAll, describe } from "vitest";
import { FirmQueue, silentLogger, type FirmQueueOptions } from "../../src/index.js";
import type { Db, DialectName } from "../../src/database/dialect.js";
import { createTestDatabase, testDialects, type TestDatabase } from "./test-database.js";

/** Tables emptied between tests, children before parents. */
const TABLES = [
  "firm_queue_jobs", // executions (but claims) and recurring executions cascade from jobs
  "firm_queue_claimed_executions", // no foreign key: no path of the library deletes a claimed job
  "firm_queue_pauses",
  "firm_queue_processes",
  "firm_queue_semaphores",
  "firm_queue_recurring_tasks",
  "firm_queue_job_keys", // no foreign key: a key may be held after its job was deleted
  "firm_queue_rate_budgets",
  "firm_queue_rate_starts", // no foreign key: starts count after their job is gone
  "firm_queue_batches", // batch memberships cascade from batches (no foreign key to jobs)
] as const;

/**
 * One database per test file and dialect, migrated once. Each test gets fresh FirmQueue
 * instances from `env.firm()`; they are closed and every table is emptied after the test.
 */
export class TestEnv {
  private database: TestDatabase | undefined;
  private readonly open: FirmQueue[] = [];
  private admin: FirmQueue | undefined;

  constructor(readonly dialect: DialectName) {}

  get url(): string {
    if (!this.database) throw new Error("TestEnv used outside its describe block");
    return this.database.url;
  }

  /** A new FirmQueue on this test's database (silent unless options say otherwise). */
  firm(options: FirmQueueOptions = {}): FirmQueue {
    const firm = new FirmQueue({ databaseUrl: this.url, logger: silentLogger, ...options });
    this.open.push(firm);
    return firm;
  }

  /** A raw Kysely handle on the test database, for assertions. */
  async db(): Promise<Db> {
    return (await this.admin!.database()).db;
  }

  async setup(): Promise<void> {
    this.database = await createTestDatabase(this.dialect);
    this.admin = new FirmQueue({ databaseUrl: this.url, logger: silentLogger });
    await this.admin.migrate();
  }

  async reset(): Promise<void> {
    await Promise.all(this.open.splice(0).map((firm) => firm.close()));
    const db = await this.db();
    for (const table of TABLES) await db.deleteFrom(table).execute();
  }

  async teardown(): Promise<void> {
    await this.admin?.close();
    await this.database?.drop();
  }
}

/** `describe` once per database under test, each with its own {@link TestEnv}, one database after the other. */
export function describeEachDatabase(
  title: string,
  body: (env: TestEnv) => void,
  /** Only these of the databases under test: for behaviour that exists on some databases only. */
  only?: readonly DialectName[],
): void {
  const dialects = testDialects().filter((dialect) => only === undefined || only.includes(dialect));
  if (dialects.length === 0) return;
  describe.each(dialects)(`${title} [%s]`, (dialect) => databaseBlock(dialect, body));
}

/**
 * {@link describeEachDatabase}, with the databases side by side: each database's tests still run
 * one at a time, but the databases overlap. For a file whose tests mostly wait (on sleeps, polls,
 * clock windows); not for one with module-level state shared by its tests, short alive thresholds
 * or timed assertions, since the databases then share the CPU.
 */
export function describeEachDatabaseAtOnce(
  title: string,
  body: (env: TestEnv) => void,
  only?: readonly DialectName[],
): void {
  const dialects = testDialects().filter((dialect) => only === undefined || only.includes(dialect));
  // Sibling concurrent describes run at once; the sequential one inside keeps the tests in turn.
  for (const dialect of dialects) {
    describe(`${title} [${dialect}]`, { concurrent: true }, () => {
      describe("one test at a time", { sequential: true }, () => databaseBlock(dialect, body));
    });
  }
}

function databaseBlock(dialect: DialectName, body: (env: TestEnv) => void): void {
  const env = new TestEnv(dialect);
  beforeAll(() => env.setup());
  afterEach(() => env.reset());
  afterAll(() => env.teardown());
  body(env);
}

/** Count rows of a table. */
export async function countRows(db: Db, table: Parameters<Db["selectFrom"]>[0]): Promise<number> {
  const row = await db
    .selectFrom(table as "firm_queue_jobs")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Poll `check` until it returns true or `timeout` ms pass. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeout = 10_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeout} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The id of a job that must have been created (not dropped by a concurrency limit, nor matched by its key). */
export async function enqueued(result: Promise<EnqueueResult>): Promise<number> {
  const value = await result;
  if (value.status !== "created")
    throw new Error(`the job was ${value.status}, but the test expected it to be created`);
  return value.id;
}
