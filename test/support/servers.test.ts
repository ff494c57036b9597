// Proves the test plumbing itself: for each dialect under test, a fresh
// database can be created, used and dropped. If this fails, every other test
// would fail for reasons that have nothing to do with firm-queue.

import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import mysql from "mysql2/promise";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createTestDatabase, testDialects, type Dialect } from "./test-database.js";

/** Runs the same small script on each kind of database; returns what it read back. */
type RoundTrip = (url: string) => Promise<{ one: number; tablesBefore: number; row: { id: number; name: string } }>;

const sqlitePath = (url: string) => url.slice("sqlite:".length);

const roundTrips: Record<Dialect, RoundTrip> = {
  async sqlite(url) {
    const db = new Database(sqlitePath(url));
    try {
      const one = db.prepare("SELECT 1 AS one").get() as { one: number };
      const before = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number };
      db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
      db.prepare("INSERT INTO t (id, name) VALUES (?, ?)").run(1, "héllo ✓");
      const row = db.prepare("SELECT id, name FROM t").get() as { id: number; name: string };
      return { one: one.one, tablesBefore: before.n, row };
    } finally {
      db.close();
    }
  },

  async postgres(url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const one = await client.query<{ one: number }>("SELECT 1 AS one");
      const before = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
      );
      await client.query("CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL)");
      await client.query("INSERT INTO t (id, name) VALUES ($1, $2)", [1, "héllo ✓"]);
      const rows = await client.query<{ id: number; name: string }>("SELECT id, name FROM t");
      return { one: one.rows[0]!.one, tablesBefore: before.rows[0]!.n, row: rows.rows[0]! };
    } finally {
      await client.end();
    }
  },

  async mysql(url) {
    const connection = await mysql.createConnection(url);
    try {
      const [one] = await connection.query<mysql.RowDataPacket[]>("SELECT 1 AS one");
      const [before] = await connection.query<mysql.RowDataPacket[]>(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE()",
      );
      await connection.query("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL)");
      await connection.query("INSERT INTO t (id, name) VALUES (?, ?)", [1, "héllo ✓"]);
      const [rows] = await connection.query<mysql.RowDataPacket[]>("SELECT id, name FROM t");
      return {
        one: Number(one[0]!.one),
        tablesBefore: Number(before[0]!.n),
        row: { id: rows[0]!.id, name: rows[0]!.name },
      };
    } finally {
      await connection.end();
    }
  },
};

/** Whether the database behind a URL still exists after drop(). */
const stillExists: Record<Dialect, (url: string) => Promise<boolean>> = {
  sqlite: async (url) => existsSync(sqlitePath(url)),
  postgres: async (url) => {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === "3D000") return false; // invalid_catalog_name
      throw error;
    }
  },
  mysql: async (url) => {
    try {
      await (await mysql.createConnection(url)).end();
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === "ER_BAD_DB_ERROR") return false;
      throw error;
    }
  },
};

describe.each(testDialects())("%s test database", (dialect) => {
  it("starts empty, stores and reads a row, and is gone after drop()", async () => {
    const db = await createTestDatabase(dialect);
    try {
      const result = await roundTrips[dialect](db.url);
      expect(result).toEqual({ one: 1, tablesBefore: 0, row: { id: 1, name: "héllo ✓" } });
    } finally {
      await db.drop();
    }
    expect(await stillExists[dialect](db.url)).toBe(false);
  });

  it("gives each caller a database of its own", async () => {
    const [a, b] = await Promise.all([createTestDatabase(dialect), createTestDatabase(dialect)]);
    try {
      expect(a.url).not.toBe(b.url);
    } finally {
      await Promise.all([a.drop(), b.drop()]);
    }
  });
});
