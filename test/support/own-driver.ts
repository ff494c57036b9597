// The test database reached through its own driver (better-sqlite3, pg, mysql2), with no
// firm-queue code involved: how a team's migration tool, or a person at a SQL prompt, sees it.
import { existsSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import mysql from "mysql2/promise";
import pg from "pg";

const sqliteFile = (url: string) => url.replace(/^sqlite:(\/\/)?/, "");
const mysqlUri = (url: string) => url.replace(/^mariadb:/, "mysql:");

/** Apply a SQL script through the database's own driver, as a team's migration tool would. */
export async function applyScript(dialect: string, url: string, script: string): Promise<void> {
  if (dialect === "sqlite") {
    const db = new BetterSqlite3(sqliteFile(url));
    db.exec(script);
    db.close();
  } else if (dialect === "postgres") {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(script);
    await client.end();
  } else {
    const connection = await mysql.createConnection({ uri: mysqlUri(url), multipleStatements: true });
    await connection.query(script);
    await connection.end();
  }
}

/** The tables of the database, by name, as its own driver lists them (none for a SQLite file not created yet). */
export async function tableNames(dialect: string, url: string): Promise<string[]> {
  if (dialect === "sqlite") {
    const file = sqliteFile(url);
    if (!existsSync(file)) return [];
    const db = new BetterSqlite3(file);
    const rows = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'sqlite_sequence'").all();
    db.close();
    return (rows as { name: string }[]).map((row) => row.name).sort();
  }
  if (dialect === "postgres") {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'");
    await client.end();
    return rows.map((row: { name: string }) => row.name).sort();
  }
  const connection = await mysql.createConnection({ uri: mysqlUri(url) });
  const [rows] = await connection.query(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()",
  );
  await connection.end();
  return (rows as { name: string }[]).map((row) => row.name).sort();
}
