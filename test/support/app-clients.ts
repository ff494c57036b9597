// The application side of integration tests: the database clients an app brings (its own pools,
// Kysely, Knex, Drizzle), opened on a test database, each able to run work in a transaction
// that commits or rolls back.
import BetterSqlite3 from "better-sqlite3";
import { drizzle as drizzleMysql } from "drizzle-orm/mysql2";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import knexFactory from "knex";
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from "kysely";
import {
  Kysely as OtherKysely,
  PostgresDialect as OtherPostgresDialect,
  MysqlDialect as OtherMysqlDialect,
  SqliteDialect as OtherSqliteDialect,
} from "kysely-0.28.8";
import mysql from "mysql2";
import pg from "pg";
import {
  fromBetterSqlite3,
  fromDrizzle,
  fromKnex,
  fromMysql2,
  fromPg,
  type EnqueueTransaction,
} from "../../src/index.js";
import type { DialectName } from "../../src/database/dialect.js";

/** A client the app holds, and how it runs `work` in a transaction of its own. */
export interface AppClient {
  readonly name: string;
  /** Run `work` in the app's transaction; commit unless `rollback`, then throw nothing. */
  transaction(work: (transaction: EnqueueTransaction) => Promise<void>, options: { rollback: boolean }): Promise<void>;
  close(): Promise<void>;
}

class Rollback extends Error {}

const sqliteFile = (url: string) => url.replace(/^sqlite:(\/\/)?/, "");
const mysqlUri = (url: string) => url.replace(/^mariadb:/, "mysql:");

/** Run `body` in a transaction begun by `begin`, ending it as asked; swallows only our Rollback. */
async function ended(
  body: () => Promise<void>,
  rollback: boolean,
  commit: () => Promise<unknown>,
  abort: () => Promise<unknown>,
): Promise<void> {
  try {
    await body();
  } catch (error) {
    await abort();
    throw error;
  }
  await (rollback ? abort() : commit());
}

/** Every client an app on `dialect` may hold, opened on `url`. */
export function appClients(dialect: DialectName, urlOf: () => string): Array<{ name: string; open: () => AppClient }> {
  const kyselyOn = (K: typeof Kysely | typeof OtherKysely, name: string) => (): AppClient => {
    const url = urlOf();
    const dialects = { postgres: PostgresDialect, mysql: MysqlDialect, sqlite: SqliteDialect };
    const other = { postgres: OtherPostgresDialect, mysql: OtherMysqlDialect, sqlite: OtherSqliteDialect };
    const D = (K === Kysely ? dialects : other)[dialect] as any;
    const config =
      dialect === "postgres"
        ? { pool: new pg.Pool({ connectionString: url }) }
        : dialect === "mysql"
          ? { pool: mysql.createPool(mysqlUri(url)) }
          : { database: new BetterSqlite3(sqliteFile(url)) };
    const db = new (K as any)({ dialect: new D(config) }) as Kysely<any>;
    return {
      name,
      async transaction(work, { rollback }) {
        await db
          .transaction()
          .execute(async (trx) => {
            await trx.selectNoFrom((eb) => eb.val(1).as("one")).execute();
            await work(trx);
            if (rollback) throw new Rollback();
          })
          .catch((error) => {
            if (!(error instanceof Rollback)) throw error;
          });
      },
      close: () => db.destroy(),
    };
  };
  const knex = (): AppClient => {
    const url = urlOf();
    const client = { postgres: "pg", mysql: "mysql2", sqlite: "better-sqlite3" }[dialect];
    const connection = dialect === "sqlite" ? { filename: sqliteFile(url) } : dialect === "mysql" ? mysqlUri(url) : url;
    const db = knexFactory({ client, connection, useNullAsDefault: true });
    return {
      name: "knex",
      async transaction(work, { rollback }) {
        const trx = await db.transaction();
        await ended(
          () => work(fromKnex(trx)),
          rollback,
          () => trx.commit(),
          () => trx.rollback(),
        );
      },
      close: () => db.destroy(),
    };
  };
  const driver = (): AppClient => {
    const url = urlOf();
    if (dialect === "postgres") {
      const pool = new pg.Pool({ connectionString: url });
      return {
        name: "pg client",
        async transaction(work, { rollback }) {
          const client = await pool.connect();
          try {
            await client.query("BEGIN");
            await ended(
              () => work(fromPg(client)),
              rollback,
              () => client.query("COMMIT"),
              () => client.query("ROLLBACK"),
            );
          } finally {
            client.release();
          }
        },
        close: () => pool.end(),
      };
    }
    if (dialect === "mysql") {
      const pool = mysql.createPool(mysqlUri(url)).promise();
      return {
        name: "mysql2 connection",
        async transaction(work, { rollback }) {
          const connection = await pool.getConnection();
          try {
            await connection.beginTransaction();
            await ended(
              () => work(fromMysql2(connection)),
              rollback,
              () => connection.commit(),
              () => connection.rollback(),
            );
          } finally {
            connection.release();
          }
        },
        close: () => pool.end(),
      };
    }
    const db = new BetterSqlite3(sqliteFile(url));
    db.pragma("busy_timeout = 5000");
    return {
      name: "better-sqlite3",
      async transaction(work, { rollback }) {
        db.exec("BEGIN IMMEDIATE");
        await ended(
          () => work(fromBetterSqlite3(db)),
          rollback,
          async () => db.exec("COMMIT"),
          async () => db.exec("ROLLBACK"),
        );
      },
      close: async () => void db.close(),
    };
  };
  const drizzle = (): AppClient => {
    const url = urlOf();
    const pool = dialect === "postgres" ? new pg.Pool({ connectionString: url }) : mysql.createPool(mysqlUri(url));
    const db: any = dialect === "postgres" ? drizzlePg(pool as pg.Pool) : drizzleMysql(pool as mysql.Pool);
    return {
      name: "drizzle",
      async transaction(work, { rollback }) {
        await db
          .transaction(async (tx: object) => {
            await work(fromDrizzle(tx));
            if (rollback) throw new Rollback();
          })
          .catch((error: unknown) => {
            if (!(error instanceof Rollback)) throw error;
          });
      },
      close: () =>
        dialect === "postgres"
          ? (pool as pg.Pool).end()
          : new Promise<void>((resolve) => (pool as mysql.Pool).end(() => resolve())),
    };
  };
  // Drizzle's better-sqlite3 transactions run their callback synchronously: nothing can be awaited in them.
  const driverName = { postgres: "pg client", mysql: "mysql2 connection", sqlite: "better-sqlite3" }[dialect];
  return [
    { name: "kysely", open: kyselyOn(Kysely, "kysely") },
    { name: "kysely 0.28.8 (another copy)", open: kyselyOn(OtherKysely, "kysely 0.28.8 (another copy)") },
    { name: "knex", open: knex },
    { name: driverName, open: driver },
    ...(dialect === "sqlite" ? [] : [{ name: "drizzle", open: drizzle }]),
  ];
}
