// firm-queue behind PgBouncer in transaction mode: every statement outside a transaction may run
// on a different server connection (round robin here, so leaked session state fails at once), and
// LISTEN cannot work through it. Migrations, enqueue, claims and finishes go through the pooler;
// the LISTEN connection goes to `listenUrl`, straight to the server. PostgreSQL only.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { inject } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import { pgbouncerBinary, startPgbouncer } from "../scripts/servers/pgbouncer.mjs";
import type { RunningServer } from "../scripts/servers/types.js";
import type { Db } from "../src/database/dialect.js";
import { countRows, waitFor } from "./support/harness.js";
import { spawnCli, ROOT } from "./support/processes.js";
import { createTestDatabase, testDialects, type TestDatabase } from "./support/test-database.js";

const underTest = testDialects().includes("postgres");
const missing = pgbouncerBinary() === null;
const ci = !["", "0", "false"].includes((process.env.CI ?? "").trim().toLowerCase());
if (underTest && missing) {
  if (ci) throw new Error("PgBouncer is not installed, and CI must test it: .ci/run installs the pgbouncer package.");
  console.warn("\n!!! PGBOUNCER TESTS SKIPPED: pgbouncer is not installed (Debian: apt-get install pgbouncer).\n");
}

describe.skipIf(!underTest || missing)("PgBouncer in transaction mode [postgres]", () => {
  let bouncer: RunningServer;
  let database: TestDatabase;
  /** The test database through PgBouncer, and directly. */
  let pooled: string;
  let direct: string;
  const open: FirmQueue[] = [];
  const firm = (options: ConstructorParameters<typeof FirmQueue>[0]) => {
    const instance = new FirmQueue({ logger: silentLogger, ...options });
    open.push(instance);
    return instance;
  };

  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    direct = database.url;
    bouncer = await startPgbouncer({ serverUrl: inject("firmQueueAdminUrls").postgres! });
    const url = new URL(bouncer.url);
    url.pathname = new URL(direct).pathname;
    pooled = url.href;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(open.map((instance) => instance.close()));
    await bouncer?.stop();
    await database?.drop();
  });

  it("migrates through the pooler, two migrators at once, and leaves no lock held", async () => {
    // Several server connections behind the pooler, so consecutive statements land on different ones.
    await Promise.all([...Array(4)].map(() => query(pooled, "SELECT pg_sleep(0.2)")));
    const [first, second] = await Promise.all([
      firm({ databaseUrl: pooled }).migrate(),
      firm({ databaseUrl: pooled }).migrate(),
    ]);
    expect([first.length, second.length].sort()).toEqual([0, first.length + second.length]);
    expect(first.length + second.length).toBeGreaterThan(0);
    // A session-level advisory lock taken on one server connection and "released" on another
    // would still be held here, and the next migrator would wait for it forever.
    const locks = await query(direct, "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'");
    expect(locks[0]!.n).toBe(0);
    expect(await firm({ databaseUrl: pooled }).migrate()).toEqual([]);
  }, 60_000);

  it("enqueues, claims, retries, limits and finishes through the pooler, woken by NOTIFY on listenUrl", async () => {
    const worker = firm({ databaseUrl: pooled, listenUrl: direct });
    const enqueuer = firm({ databaseUrl: pooled });
    let flakyRuns = 0;
    for (const instance of [worker, enqueuer]) {
      instance.defineJob("plain", () => undefined);
      instance.defineJob("limited", () => undefined, { concurrency: { key: "one", to: 1 } });
      instance.defineJob(
        "flaky",
        () => {
          if (flakyRuns++ === 0) throw new Error("first attempt fails");
        },
        { retry: { attempts: 3, backoff: 100, jitter: 0 } },
      );
    }
    await worker.migrate();
    // A minute between polls: only a notification can wake the worker within the test's time.
    const supervisor = await worker.start({
      workers: [{ concurrency: 4, pollingInterval: "60s" }],
      dispatchers: [{ pollingInterval: "200ms" }],
    });
    await waitFor(async () => (await listeners(direct)) === 1, 10_000, "the LISTEN connection to the server");
    const ids = [
      ...(await Promise.all([...Array(20)].map((_, n) => enqueuer.enqueue("plain", { n })))).map((result) => result.id),
      ...(await Promise.all([...Array(5)].map((_, n) => enqueuer.enqueue("limited", { n })))).map(
        (result) => result.id,
      ),
      (await enqueuer.enqueue("flaky", null)).id,
      (await enqueuer.enqueue("plain", { later: true }, { wait: "300ms" })).id,
    ] as number[];
    const db = (await enqueuer.database()).db;
    await waitFor(() => allFinished(db, ids), 20_000, "every job finished");
    expect(flakyRuns).toBe(2);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
    expect(await countRows(db, "firm_queue_failed_executions")).toBe(0);
    await supervisor.stop();
  }, 60_000);

  it("runs `firm-queue start` with --database-url through the pooler and --listen-url to the server", async () => {
    const enqueuer = firm({ databaseUrl: pooled });
    enqueuer.defineJob("noop", () => undefined);
    await enqueuer.migrate();
    const host = spawnCli(
      [
        "start",
        "--require",
        `${ROOT}/test/fixtures/multi-host-jobs.ts`,
        "--database-url",
        pooled,
        "--listen-url",
        direct,
        "--mode",
        "fork",
        "--polling-interval",
        "60s",
      ],
      { FIRM_QUEUE_LOG_LEVEL: "warn" },
    );
    try {
      // Only the worker process listens; two would mean the flag reached a process that does not need it.
      await waitFor(async () => (await listeners(direct)) === 1, 30_000, "the fork-mode worker's LISTEN connection");
      const ids = (await Promise.all([...Array(10)].map(() => enqueuer.enqueue("noop", null)))).map(
        (result) => result.id,
      ) as number[];
      const db = (await enqueuer.database()).db;
      await waitFor(() => allFinished(db, ids), 20_000, "every job finished");
    } finally {
      host.child.kill("SIGTERM");
    }
    const finished = await host.finished;
    expect(finished.code, finished.stderr).toBe(0);
  }, 90_000);
});

async function query(url: string, text: string): Promise<Array<Record<string, number>>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Array<Record<string, number>>;
  } finally {
    await client.end();
  }
}

/** Connections to this test's database that sit in LISTEN (seen on the server itself). */
async function listeners(direct: string): Promise<number> {
  const name = new URL(direct).pathname.slice(1);
  const rows = await query(
    direct,
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${name}' AND query LIKE 'LISTEN %'`,
  );
  return Number(rows[0]!.n);
}

/** Whether every job of `ids` has finished. */
async function allFinished(db: Db, ids: readonly number[]): Promise<boolean> {
  const rows = await db
    .selectFrom("firm_queue_jobs")
    .select("id")
    .where("id", "in", ids)
    .where("finished_at", "is not", null)
    .execute();
  return rows.length === ids.length;
}
