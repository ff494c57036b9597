// Fresh, empty, uniquely named databases for tests, on the servers that
// global-setup.ts chose. Each test file (or test) can have its own, so files
// run in parallel without seeing each other's jobs.

import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mysql from "mysql2/promise";
import pg from "pg";
import { inject } from "vitest";
import type { Dialect } from "./global-setup.js";

export type { Dialect };

export interface TestDatabase {
  /** Connection URL for firm-queue: sqlite:/abs/path, postgres://..., mysql://... */
  url: string;
  /** Removes the database, closing anyone still connected. Safe to call twice. */
  drop(): Promise<void>;
}

/** The dialects this run tests, for describe.each(testDialects()). */
export function testDialects(): Dialect[] {
  return inject("firmQueueDialects");
}

export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === "sqlite") return createSqlite();
  const adminUrl = inject("firmQueueAdminUrls")[dialect];
  if (!adminUrl) throw new Error(`${dialect} is not under test in this run (see FIRM_QUEUE_TEST_DIALECTS).`);
  // Hex only, so the name never needs escaping beyond quoting.
  const name = `firm_test_${randomBytes(6).toString("hex")}`;
  return dialect === "postgres" ? createPostgres(adminUrl, name) : createMysql(adminUrl, name);
}

async function createSqlite(): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), "firm-queue-sqlite-"));
  // The file itself appears on first connect; an absent file is an empty database.
  return { url: `sqlite:${join(dir, "test.sqlite3")}`, drop: once(() => rm(dir, { recursive: true, force: true })) };
}

async function createPostgres(adminUrl: string, name: string): Promise<TestDatabase> {
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  // FORCE: a test that forgot to close its pool must not make teardown hang.
  return {
    url: withDatabase(adminUrl, name),
    drop: once(() => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  };
}

async function createMysql(adminUrl: string, name: string): Promise<TestDatabase> {
  const admin = async (work: (connection: mysql.Connection) => Promise<unknown>) => {
    const connection = await mysql.createConnection(adminUrl);
    try {
      await work(connection);
    } finally {
      await connection.end();
    }
  };
  await admin((connection) => connection.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`));
  const drop = () =>
    admin(async (connection) => {
      // MySQL has no DROP ... FORCE, and a leftover connection holding a lock
      // would block the drop: end such connections first.
      const [rows] = await connection.query<mysql.RowDataPacket[]>(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()",
        [name],
      );
      for (const row of rows) await connection.query("KILL ?", [row.ID]).catch(() => {});
      await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
    });
  return { url: withDatabase(adminUrl, name), drop: once(drop) };
}

/** The admin URL pointed at another database, keeping user, host and options. */
function withDatabase(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.href;
}

function once(fn: () => Promise<unknown>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn().then(() => undefined));
}
