// Databases for benchmarks: a fresh SQLite file, or a fresh database on a server given by URL or
// on a throwaway server started here (same scripts as the test suite). Each comes with cleanup.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mysql from "mysql2/promise";
import pg from "pg";
import { startMariadb } from "../scripts/servers/mariadb.mjs";
import { startPostgres } from "../scripts/servers/postgres.mjs";

/**
 * @param {"sqlite" | "postgres" | "mysql"} dialect
 * @param {string | undefined} adminUrl server URL to create the database on; a throwaway server when absent
 * @returns {Promise<{ url: string, note: string, cleanup: () => Promise<void> }>}
 */
export async function benchDatabase(dialect, adminUrl) {
  if (dialect === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "firm-queue-bench-"));
    return {
      url: `sqlite:${join(dir, "bench.sqlite3")}`,
      note: "SQLite file in the temp dir (WAL, synchronous=NORMAL)",
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const server = adminUrl ? undefined : dialect === "postgres" ? await startPostgres() : await startMariadb();
  const admin = adminUrl ?? server.url;
  const name = `firm_bench_${randomBytes(4).toString("hex")}`;
  if (dialect === "postgres") {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
  } else {
    const connection = await mysql.createConnection(admin);
    await connection.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`);
    await connection.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const note = server
    ? `throwaway ${dialect === "postgres" ? "PostgreSQL" : "MariaDB"} on loopback (durability off, as in the test suite)`
    : `${dialect} server given by URL`;
  return {
    url: url.toString(),
    note,
    cleanup: async () => {
      if (server) return server.stop();
      if (dialect === "postgres") {
        const client = new pg.Client({ connectionString: admin });
        await client.connect();
        await client.query(`DROP DATABASE ${name} WITH (FORCE)`);
        await client.end();
      } else {
        const connection = await mysql.createConnection(admin);
        await connection.query(`DROP DATABASE ${name}`);
        await connection.end();
      }
    },
  };
}
