// Database handles an application already holds (pools, a better-sqlite3 Database, Kysely), to
// pass as `new FirmQueue({ database })`. Each can prove it is still open after firm-queue closed.
import BetterSqlite3 from "better-sqlite3";
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql } from "kysely";
import mysql from "mysql2";
import mysqlPromise from "mysql2/promise";
import pg from "pg";
import type { DatabaseHandle } from "../../src/index.js";
import type { DialectName } from "../../src/database/dialect.js";

export interface AppHandle {
  readonly handle: DatabaseHandle;
  /** Run a query through the handle: fails if anything closed it. */
  stillOpen(): Promise<void>;
  close(): Promise<void>;
}

export const sqliteFile = (url: string) => url.replace(/^sqlite:(\/\/)?/, "");
export const mysqlUri = (url: string) => url.replace(/^mariadb:/, "mysql:");

/** The handles an app on `dialect` may hold, by name, each opened on `urlOf()` when called. */
export function appHandles(dialect: DialectName, urlOf: () => string): Array<{ name: string; open: () => AppHandle }> {
  const kysely = (): AppHandle => {
    const url = urlOf();
    const db = new Kysely<any>({
      dialect:
        dialect === "postgres"
          ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) })
          : dialect === "mysql"
            ? new MysqlDialect({ pool: mysql.createPool(mysqlUri(url)) })
            : new SqliteDialect({ database: new BetterSqlite3(sqliteFile(url)) }),
    });
    return { handle: db, stillOpen: async () => void (await sql`SELECT 1`.execute(db)), close: () => db.destroy() };
  };
  if (dialect === "postgres") {
    return [
      {
        name: "pg.Pool",
        open: () => {
          const pool = new pg.Pool({ connectionString: urlOf() });
          return { handle: pool, stillOpen: async () => void (await pool.query("SELECT 1")), close: () => pool.end() };
        },
      },
      { name: "Kysely", open: kysely },
    ];
  }
  if (dialect === "mysql") {
    return [
      {
        name: "mysql2 pool",
        open: () => {
          const pool = mysql.createPool(mysqlUri(urlOf()));
          return {
            handle: pool,
            stillOpen: () =>
              new Promise<void>((resolve, reject) =>
                pool.query("SELECT 1", (error) => (error ? reject(error) : resolve())),
              ),
            close: () => new Promise<void>((resolve) => pool.end(() => resolve())),
          };
        },
      },
      {
        name: "mysql2/promise pool",
        open: () => {
          const pool = mysqlPromise.createPool(mysqlUri(urlOf()));
          return { handle: pool, stillOpen: async () => void (await pool.query("SELECT 1")), close: () => pool.end() };
        },
      },
      { name: "Kysely", open: kysely },
    ];
  }
  return [
    {
      name: "better-sqlite3 Database",
      open: () => {
        const db = new BetterSqlite3(sqliteFile(urlOf()));
        return {
          handle: db,
          stillOpen: async () => void db.prepare("SELECT 1").get(),
          close: async () => void db.close(),
        };
      },
    },
    { name: "Kysely", open: kysely },
  ];
}
