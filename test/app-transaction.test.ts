import BetterSqlite3 from "better-sqlite3";
import mysql from "mysql2/promise";
import pg from "pg";
import type { Transaction as OtherKyselyTransaction } from "kysely-0.28.8";
import { expect, it } from "vitest";
import type { EnqueuedJob, Job } from "../src/index.js";
import { appClients } from "./support/app-clients.js";
import { countRows, describeEachDatabase } from "./support/harness.js";

describeEachDatabase("enqueue inside the application's own transaction", (env) => {
  for (const { name, open } of appClients(env.dialect, () => env.url)) {
    it(`${name}: the job exists if and only if the app's transaction commits`, async () => {
      const firm = env.firm();
      const job = firm.defineJob<{ n: number }>("app-work", async () => undefined);
      const app = open();
      try {
        let committedId = 0;
        await app.transaction(
          async (transaction) => {
            committedId = (await job.enqueue({ n: 1 }, { transaction, wait: "1h" })).id!;
            await job.enqueue({ n: 2 }, { transaction });
          },
          { rollback: false },
        );
        await app.transaction(
          async (transaction) => {
            await firm.enqueue("app-work", { n: 3 }, { transaction });
          },
          { rollback: true },
        );
        const db = await env.db();
        const rows = await db
          .selectFrom("firm_queue_jobs")
          .select(["id", "arguments", "scheduled_at"])
          .orderBy("id")
          .execute();
        expect(rows).toHaveLength(2);
        expect(rows[0]!.id).toBe(committedId);
        // The scheduled time went through the app's driver as the same instant firm-queue writes.
        const at = new Date(rows[0]!.scheduled_at as string | Date).getTime();
        expect(Math.abs(at - (Date.now() + 3_600_000))).toBeLessThan(120_000);
        expect(await countRows(db, "firm_queue_scheduled_executions")).toBe(1);
        expect(await countRows(db, "firm_queue_ready_executions")).toBe(1);
        expect(await firm.drain()).toBe(1);
      } finally {
        await app.close();
      }
    });
  }

  it("concurrency limits apply to jobs enqueued in the app's transaction (semaphores written and read through it)", async () => {
    const firm = env.firm();
    const limited = firm.defineJob("limited", async (_args: { account: string }) => undefined, {
      concurrency: { key: (args) => args.account, to: 1, duration: "2m" },
    });
    const { open } = appClients(env.dialect, () => env.url)[0]!;
    const app = open();
    try {
      await app.transaction(
        async (transaction) => {
          await limited.enqueue({ account: "a" }, { transaction });
          await limited.enqueue({ account: "a" }, { transaction });
        },
        { rollback: false },
      );
      const db = await env.db();
      expect(await countRows(db, "firm_queue_ready_executions")).toBe(1);
      expect(await countRows(db, "firm_queue_blocked_executions")).toBe(1);
      const semaphore = await db
        .selectFrom("firm_queue_semaphores")
        .select(["key", "value", "expires_at"])
        .executeTakeFirstOrThrow();
      expect(semaphore.value).toBe(0);
      // The expiry went through the app's driver as the same instant firm-queue writes: about 2 minutes ahead.
      expect(Math.abs(new Date(semaphore.expires_at as string | Date).getTime() - (Date.now() + 120_000))).toBeLessThan(
        60_000,
      );
    } finally {
      await app.close();
    }
  });

  it("a plain enqueue while the app holds a write transaction on its own connection in this process waits without freezing the event loop", async () => {
    const firm = env.firm();
    const job = firm.defineJob("plain", async () => undefined);
    await firm.migrate();
    const app = await holdWriteTransaction(env.dialect, env.url);
    try {
      // The longest the event loop went without running a timer. Frozen, it waits out SQLite's
      // whole 5 s busy timeout; the bound below is half that, far above any scheduling delay.
      let last = Date.now();
      let longestGap = 0;
      const ticker = setInterval(() => {
        longestGap = Math.max(longestGap, Date.now() - last);
        last = Date.now();
      }, 5);
      const enqueued = job.enqueue({});
      // The app commits from a timer: only possible if the event loop keeps running meanwhile.
      const committed = new Promise<void>((resolve, reject) =>
        setTimeout(() => app.commit().then(resolve, reject), 100),
      );
      await Promise.all([enqueued, committed]);
      clearInterval(ticker);
      expect(longestGap).toBeLessThan(2_500);
      expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(1);
    } finally {
      await app.close();
    }
  });
});

/** The app's own connection, inside a transaction that has written to a table of its own. */
async function holdWriteTransaction(
  dialect: string,
  url: string,
): Promise<{ commit(): Promise<void>; close(): Promise<void> }> {
  if (dialect === "sqlite") {
    const db = new BetterSqlite3(url.replace(/^sqlite:(\/\/)?/, ""));
    db.exec("CREATE TABLE IF NOT EXISTS app_orders (id INTEGER PRIMARY KEY)");
    db.exec("BEGIN IMMEDIATE");
    db.exec("INSERT INTO app_orders DEFAULT VALUES");
    return { commit: async () => void db.exec("COMMIT"), close: async () => void db.close() };
  }
  if (dialect === "postgres") {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query("CREATE TABLE IF NOT EXISTS app_orders (id SERIAL PRIMARY KEY)");
    await client.query("BEGIN");
    await client.query("INSERT INTO app_orders DEFAULT VALUES");
    return { commit: async () => void (await client.query("COMMIT")), close: () => client.end() };
  }
  const connection = await mysql.createConnection(url.replace(/^mariadb:/, "mysql:"));
  await connection.query("CREATE TABLE IF NOT EXISTS app_orders (id INT AUTO_INCREMENT PRIMARY KEY)");
  await connection.beginTransaction();
  await connection.query("INSERT INTO app_orders () VALUES ()");
  return { commit: () => connection.commit(), close: () => connection.end() };
}

/**
 * Type-level (npm test type-checks this file): a transaction typed by another copy of Kysely 0.28
 * is accepted. A nominal `Kysely<any>` from firm-queue's own copy would not be (its `#private`
 * members differ between copies).
 */
export function enqueueWithAnotherKyselyCopy(
  job: Job<{ n: number }>,
  transaction: OtherKyselyTransaction<unknown>,
): Promise<EnqueuedJob> {
  return job.enqueue({ n: 1 }, { transaction });
}
