import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startPgbouncer, pgbouncerBinary, type RunningServer } from "../scripts/servers/pgbouncer.mjs";
import { FirmQueue, silentLogger, type DatabaseHandle } from "../src/index.js";
import { TestEnv, waitFor } from "./support/harness.js";
import { testDialects } from "./support/test-database.js";

const isCi = () => !!process.env.CI && !["false", "0"].includes(process.env.CI);

/** Workers poll once a minute here: only a NOTIFY can make another instance's job run in time. */
const SLOW_POLL = 60_000;

// LISTEN/NOTIFY is PostgreSQL's; elsewhere workers poll, which the other suites cover.
describe.runIf(testDialects().includes("postgres"))(
  "PostgreSQL wake-ups with a handle the application passes in",
  () => {
    const env = new TestEnv("postgres");
    const closing: Array<() => Promise<unknown>> = [];
    beforeAll(() => env.setup());
    afterEach(async () => {
      for (const close of closing.splice(0).reverse()) await close();
      await env.reset();
    });
    afterAll(() => env.teardown());

    /** A worker on `database` whose job runs when another FirmQueue (its own pool) enqueues it. */
    async function wakesOnAnotherInstancesJob(database: DatabaseHandle, listenUrl?: string): Promise<void> {
      const worker = new FirmQueue({ database, logger: silentLogger, ...(listenUrl ? { listenUrl } : {}) });
      closing.push(() => worker.close());
      const ran: number[] = [];
      worker.defineJob("remote", async (_args, context) => void ran.push(context.jobId));
      const supervisor = await worker.start({ workers: [{ pollingInterval: SLOW_POLL }], dispatchers: [] });
      closing.push(() => supervisor.stop());
      await new Promise((resolve) => setTimeout(resolve, 500)); // its first poll found nothing
      const id = (await env.firm().enqueue("remote", null, { undeclared: true })).id;
      await waitFor(() => ran.includes(id!), 15_000, "the other instance's job to run");
      expect(ran).toEqual([id]);
    }

    it("a pg.Pool: LISTEN on a connection of its own, opened with the pool's settings", async () => {
      const pool = new pg.Pool({ connectionString: env.url });
      closing.push(() => pool.end());
      await wakesOnAnotherInstancesJob(pool);
    });

    it("a Kysely instance with listenUrl", async () => {
      const db = new Kysely<unknown>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: env.url }) }),
      });
      closing.push(() => db.destroy());
      await wakesOnAnotherInstancesJob(db, env.url);
    });

    // Skipped on a machine without pgbouncer, except in CI, which must never quietly test less.
    describe.runIf(pgbouncerBinary() !== null || isCi())("behind PgBouncer in transaction mode", () => {
      let bouncer: RunningServer;
      /** The test database, through PgBouncer. */
      let bouncedUrl: string;
      beforeAll(async () => {
        bouncer = await startPgbouncer({ serverUrl: env.url });
        bouncedUrl = new URL(new URL(env.url).pathname, bouncer.url).href;
      });
      afterAll(() => bouncer?.stop());

      it("the pool goes through PgBouncer, LISTEN goes to listenUrl, and jobs run", async () => {
        const pool = new pg.Pool({ connectionString: bouncedUrl, max: 4 });
        closing.push(() => pool.end());
        const { rows } = await pool.query("SHOW port");
        expect(rows[0].port).toBe(new URL(env.url).port); // really served by PostgreSQL behind the bouncer
        await wakesOnAnotherInstancesJob(pool, env.url);
      });
    });
  },
);
