// The example apps' own database access: a Kysely instance on DATABASE_URL (SQLite, PostgreSQL
// or MariaDB) and an orders table. firm-queue's tables live in the same database, so an order and
// the job that confirms it are written in one transaction.
import BetterSqlite3 from "better-sqlite3";
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql } from "kysely";
import mysql from "mysql2";
import pg from "pg";

/** The app's Kysely on `url`. */
export function openAppDatabase(url) {
  if (url.startsWith("sqlite:")) {
    const db = new BetterSqlite3(url.slice("sqlite:".length).replace(/^\/\//, ""));
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    return new Kysely({ dialect: new SqliteDialect({ database: db }) });
  }
  if (/^postgres(ql)?:/.test(url))
    return new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) }) });
  return new Kysely({
    dialect: new MysqlDialect({ pool: mysql.createPool({ uri: url.replace(/^mariadb:/, "mysql:"), timezone: "Z" }) }),
  });
}

/** The orders table (created if missing). */
export async function createOrdersTable(db) {
  await db.schema
    .createTable("example_orders")
    .ifNotExists()
    .addColumn("id", "varchar(36)", (column) => column.primaryKey())
    .addColumn("email", "varchar(255)", (column) => column.notNull())
    .addColumn("confirmed", "integer", (column) => column.notNull().defaultTo(0))
    .execute();
}

/**
 * Save an order and enqueue its confirmation in one transaction of the app's own Kysely: both
 * exist, or (on any error) neither does.
 */
export async function placeOrder(db, confirmOrder, { id, email }) {
  if (typeof email !== "string" || !email.includes("@")) return { error: "email must be an address" };
  return db.transaction().execute(async (trx) => {
    await trx.insertInto("example_orders").values({ id, email }).execute();
    const jobId = (await confirmOrder.enqueue({ orderId: id, email }, { transaction: trx })).id;
    return { orderId: id, jobId };
  });
}

/** Mark an order confirmed (what the job does). */
export async function markConfirmed(db, orderId) {
  await db.updateTable("example_orders").set({ confirmed: sql`confirmed + 1` }).where("id", "=", orderId).execute();
}
