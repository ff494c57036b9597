import { mysqlReplicaState } from "./mysql-replica-state.js";
import { Kysely, MysqlAdapter, MysqlDialect, sql } from "kysely";
import type { DatabaseAdapter } from "./adapter.js";
import type { Db, Dialect } from "./dialect.js";
import { guardedPool } from "./mysql-pool.js";
import { rowLockingDialect } from "./row-locking-dialect.js";
import { renderColumns, type ColumnSpec, type TableSpec } from "./migrations/table-spec.js";
import type { Schema } from "./schema.js";
import { FirmQueueError } from "../errors.js";
import { importDriver } from "./driver-import.js";
import { retryTransient } from "./transient-errors.js";
import { claimReadyOnMariadb } from "./mysql-claim.js";
import { finishOnMariadb } from "./mysql-finish.js";
import { finishCountedOnMariadb } from "./mysql-counted-finish.js";
import { withSchemaErrors } from "./missing-table.js";
import { galeraClusterWarnings } from "./galera-check.js";

/** ER_LOCK_DEADLOCK and ER_LOCK_WAIT_TIMEOUT. */
const TRANSIENT_ERRNOS = new Set([1213, 1205]);

function isTransient(error: unknown): boolean {
  return TRANSIENT_ERRNOS.has((error as { errno?: number })?.errno ?? 0);
}

/**
 * MariaDB's side of the seam: row locks with SKIP LOCKED; deadlocks and lock timeouts are retried.
 * MariaDB spells FOR SHARE the old way. Claiming and recording finished jobs take one round trip
 * each (an anonymous block holding the transaction).
 */
export const mysqlDialect: Dialect = {
  ...rowLockingDialect(
    "mysql",
    isTransient,
    (query) => query.modifyEnd(sql`LOCK IN SHARE MODE`),
    // UTC, as every DATETIME firm-queue writes (the pool reads it with timezone "Z").
    sql<{ now: Date }>`SELECT UTC_TIMESTAMP(6) AS now`,
  ),
  claimReady: (db, claim) => retryTransient(isTransient, () => claimReadyOnMariadb(db, claim)),
  finishClaimed: (db, batch) => retryTransient(isTransient, () => finishOnMariadb(db, batch)),
  finishCounted: (db, batch) => retryTransient(isTransient, () => finishCountedOnMariadb(db, batch)),
};

const TYPES: Record<ColumnSpec["kind"], string> = {
  id: "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY",
  reference: "BIGINT",
  integer: "INT",
  string: "VARCHAR(255)",
  text: "TEXT",
  longText: "LONGTEXT",
  timestamp: "DATETIME(6)",
  boolean: "BOOLEAN",
};

function createTable(table: TableSpec): string[] {
  const columns = renderColumns(
    table,
    (column) => (column.kind === "string" && column.length ? `VARCHAR(${column.length})` : TYPES[column.kind]),
    backtick,
  );
  // MySQL 8 has no CREATE INDEX IF NOT EXISTS, so indexes go inside CREATE TABLE.
  const indexes = table.indexes.map(
    (index) => `${index.unique ? "UNIQUE " : ""}INDEX ${index.name} (${index.columns.map(backtick).join(", ")})`,
  );
  // Binary collation: queue names, job names and keys compare case-sensitively, as on the other databases.
  return [
    `CREATE TABLE IF NOT EXISTS ${table.name} (\n  ${[...columns, ...indexes].join(",\n  ")}\n) ` +
      "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
  ];
}

const backtick = (name: string) => `\`${name}\``;

const MIGRATION_LOCK = "firm_queue_migrations";
const pools = new WeakMap<Kysely<Schema>, import("mysql2").Pool>();

/** Opening, migrating and locking a MariaDB database (mysql2 driver). */
export const mysqlAdapter: DatabaseAdapter = {
  dialect: mysqlDialect,
  ddl: { createTable },
  async open(url, options) {
    const { createPool } = await importDriver("mysql2", "MySQL/MariaDB databases", () => import("mysql2"));
    const pool = createPool({
      uri: url.url.replace(/^mariadb:/i, "mysql:"),
      connectionLimit: options.poolSize,
      // DATETIME has no zone: read and write it as UTC whatever Node's TZ is.
      timezone: "Z",
      dateStrings: false,
      supportBigNumbers: true,
      charset: "utf8mb4",
      // A server that vanished without a reset is noticed by keepalive when idle, by the query
      // timeout (guardedPool) when busy, and by the connect timeout when opening.
      enableKeepAlive: true,
      keepAliveInitialDelay: options.keepAliveDelay,
      connectTimeout: options.connectTimeout,
    });
    // READ COMMITTED avoids the gap locks that make concurrent claimers deadlock under REPEATABLE READ.
    pool.on("connection", (connection) => {
      connection.query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
      // A connection lost while no query is pending is reported as an 'error' event: without a
      // listener it would crash the process. The next query on it fails instead.
      connection.on("error", () => undefined);
      // A client cut off in the middle of a transaction would leave its row locks held until the
      // server drops the connection (wait_timeout: 8 hours by default), and SKIP LOCKED claimers
      // would pass over those jobs all that time. firm-queue's transactions never sit idle, and a
      // client that waited longer than queryTimeout has given the connection up already.
      if (options.queryTimeout !== null)
        connection.query(
          `SET SESSION idle_transaction_timeout = ${Math.max(1, Math.ceil(options.queryTimeout / 1000))}`,
        );
    });
    const db = new Kysely<Schema>({
      dialect: withSchemaErrors(new MariadbDialect({ pool: guardedPool(pool, options.queryTimeout) })),
    });
    try {
      await requireMariadb(db);
    } catch (error) {
      // Wrong server, or no answer (the caller may try again): either way this pool is done.
      await db.destroy().catch(() => undefined);
      throw error;
    }
    pools.set(db, pool);
    return db;
  },
  resizePool(db, poolSize) {
    // mysql2 compares its connection count with config.connectionLimit on every getConnection.
    const pool = pools.get(db) as unknown as { config?: { connectionLimit: number } } | undefined;
    if (pool?.config) pool.config.connectionLimit = poolSize;
  },
  withMigrationLock(db, work) {
    return db.connection().execute(async (connection) => {
      await sql`SELECT GET_LOCK(${MIGRATION_LOCK}, 300)`.execute(connection);
      try {
        return await work(connection);
      } finally {
        await sql`SELECT RELEASE_LOCK(${MIGRATION_LOCK})`.execute(connection);
      }
    });
  },
  // MySQL commits DDL implicitly; each CREATE ... IF NOT EXISTS is safe to run again instead.
  inMigrationTransaction: (connection, work) => work(connection),
  async connectionLimit(db) {
    // One connection beyond max_connections is kept for a SUPER user.
    const { rows } = await sql<{ max: number; in_use: number }>`
      SELECT @@max_connections AS max, (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND <> 'Daemon') AS in_use`.execute(
      db,
    );
    const row = rows[0]!;
    return { max: Number(row.max), inUse: Number(row.in_use) };
  },
  clusterWarnings: galeraClusterWarnings,
  replicaState: mysqlReplicaState,
};

/** MariaDB answers INSERT … RETURNING with rows; Kysely's MySQL adapter assumes it cannot. */
export class MariadbAdapter extends MysqlAdapter {
  override get supportsReturning(): boolean {
    return true;
  }
}

class MariadbDialect extends MysqlDialect {
  override createAdapter(): MariadbAdapter {
    return new MariadbAdapter();
  }
}

/**
 * The claim path needs SKIP LOCKED (MariaDB 10.6) and INSERT … RETURNING (MariaDB 10.5). MySQL
 * itself has no INSERT … RETURNING; say so plainly rather than fail later in the middle of work.
 */
async function requireMariadb(db: Db): Promise<void> {
  const { rows } = await sql<{ version: string }>`SELECT VERSION() AS version`.execute(db);
  const version = rows[0]?.version ?? "";
  const match = /^(\d+)\.(\d+)/.exec(version);
  const [major, minor] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  const isMariadb = /mariadb/i.test(version);
  if (!isMariadb || major < 10 || (major === 10 && minor < 6)) {
    throw new FirmQueueError(
      `firm-queue's mysql:// support needs MariaDB 10.6 or newer (SKIP LOCKED, INSERT … RETURNING); the server reports version ${version}`,
    );
  }
}
