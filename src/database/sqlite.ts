import {
  Kysely,
  SqliteDialect,
  sql,
  type InsertQueryBuilder,
  type SelectQueryBuilder,
  type SqliteDatabase,
} from "kysely";
import type { DatabaseAdapter } from "./adapter.js";
import type { Db, Dialect } from "./dialect.js";
import {
  doubleQuote,
  renderColumns,
  renderSeparateIndexes,
  type ColumnSpec,
  type TableSpec,
} from "./migrations/table-spec.js";
import type { Schema } from "./schema.js";
import { isUniqueViolation, type UniqueIndex } from "./unique-violation.js";
import type { SqliteConnection, SqliteStatement } from "./sqlite-connection.js";
import { sqliteDriver } from "./sqlite-driver.js";
import { claimReadyOnSqlite } from "./sqlite-claim.js";
import { finishCountedOnSqlite } from "./sqlite-counted-finish.js";
import { finishOnSqlite } from "./sqlite-finish.js";
import { withSchemaErrors } from "./missing-table.js";

/** How long a transaction keeps trying to get SQLite's write lock: the busy timeout's length. */
const LOCK_WAIT_MS = 5000;

/**
 * Run `work` again while it fails because another connection holds the write lock, waiting
 * asynchronously between tries. `BEGIN IMMEDIATE` does not wait for the lock (see
 * bindableDatabase): a synchronous wait would freeze the event loop, and when the holder is the
 * application's own connection in this process, it could never commit meanwhile.
 */
async function retryBusy<T>(work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * Math.min(2 ** attempt, 25)));
    }
  }
}

/** SQLITE_BUSY: the busy timeout ran out while another connection held the write lock. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

/**
 * A transaction that takes SQLite's write lock up front (`BEGIN IMMEDIATE`): it serializes claimers
 * and writers across processes, and a reader can never deadlock upgrading to a writer.
 */
function immediateTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return retryBusy(() =>
    db.connection().execute(async (connection) => {
      await sql`BEGIN IMMEDIATE`.execute(connection);
      try {
        const result = await work(connection);
        await sql`COMMIT`.execute(connection);
        return result;
      } catch (error) {
        await sql`ROLLBACK`.execute(connection).catch(() => undefined);
        throw error;
      }
    }),
  );
}

/** SQLite's side of the seam: the write lock taken up front serializes claimers; SKIP LOCKED is not needed. */
export const sqliteDialect: Dialect = {
  name: "sqlite",
  returnsFromUpdate: true,
  beginClaimTx: immediateTransaction,
  beginWriteTx: immediateTransaction,
  withSkipLocked<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
    return query;
  },
  withRowLock<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
    return query;
  },
  ignoringConflicts<DB, TB extends keyof DB, O>(
    query: InsertQueryBuilder<DB, TB, O>,
    column: string | readonly string[],
  ): InsertQueryBuilder<DB, TB, O> {
    return query.onConflict((conflict) =>
      conflict.columns((typeof column === "string" ? [column] : column) as never).doNothing(),
    );
  },
  isUniqueViolation: (error: unknown, index: UniqueIndex) => isUniqueViolation("sqlite", error, index),
  withLatestRead<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
    return query;
  },
  withShareLock<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
    return query;
  },
  // SQLite has no server: its 'now' is the operating system's clock, which every process on the
  // machine shares (unlike a process's own idea of the time).
  async databaseTime(db: Db): Promise<Date> {
    const { rows } = await sql<{ now: string }>`SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS now`.execute(db);
    return new Date(rows[0]!.now);
  },
  claimReady: (db, claim) => claimReadyOnSqlite(db, immediateTransaction, claim),
  finishClaimed: (db, batch) => finishOnSqlite(db, immediateTransaction, batch),
  finishCounted: (db, batch) => finishCountedOnSqlite(db, immediateTransaction, batch),
};

const TYPES: Record<ColumnSpec["kind"], string> = {
  // AUTOINCREMENT stops SQLite from handing a deleted job's id to a new job.
  id: "INTEGER PRIMARY KEY AUTOINCREMENT",
  reference: "INTEGER",
  integer: "INTEGER",
  string: "TEXT",
  text: "TEXT",
  longText: "TEXT",
  // ISO-8601 UTC text: sorts and compares in time order.
  timestamp: "TEXT",
  boolean: "INTEGER",
};

function createTable(table: TableSpec): string[] {
  const columns = renderColumns(table, (column) => TYPES[column.kind], doubleQuote);
  return [
    `CREATE TABLE IF NOT EXISTS ${table.name} (\n  ${columns.join(",\n  ")}\n)`,
    ...renderSeparateIndexes(table, doubleQuote),
  ];
}

/** Opening (WAL, busy timeout, foreign keys), migrating and locking a SQLite file (better-sqlite3 or bun:sqlite). */
export const sqliteAdapter: DatabaseAdapter = {
  dialect: sqliteDialect,
  ddl: { createTable },
  async open(url) {
    const raw = (await sqliteDriver()).open(url.filename!);
    raw.pragma("journal_mode = WAL");
    raw.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
    raw.pragma("foreign_keys = ON");
    raw.pragma("synchronous = NORMAL");
    return new Kysely<Schema>({ dialect: withSchemaErrors(new SqliteDialect({ database: bindableDatabase(raw) })) });
  },
  withMigrationLock: (db, work) => sqliteDialect.beginClaimTx(db, work),
  // The migration lock is already one IMMEDIATE transaction around every migration.
  inMigrationTransaction: (connection, work) => work(connection),
};

type Statement = SqliteStatement;
const STATEMENT_CACHE_SIZE = 200;

/**
 * better-sqlite3 binds neither `Date` nor `boolean`. This wrapper stores dates as ISO-8601 UTC
 * text and booleans as 0/1, so models write the same values on every database. It also reuses
 * prepared statements, which Kysely would otherwise prepare again for every query.
 */
export function bindableDatabase(raw: SqliteConnection, { owned = true }: { owned?: boolean } = {}): SqliteDatabase {
  const cache = new Map<string, Statement>();
  const prepare = (text: string): Statement => {
    let statement = cache.get(text);
    if (statement === undefined) {
      statement = raw.prepare(text);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(text, statement);
    }
    return statement;
  };
  const busyTimeout = raw.pragma("busy_timeout", { simple: true }) as number;
  // Prepared once: a claim transaction switches the timeout off and back on around its BEGIN.
  const noWait = {
    off: raw.prepare("PRAGMA busy_timeout = 0"),
    on: raw.prepare(`PRAGMA busy_timeout = ${busyTimeout}`),
  };
  return {
    // A Database the application passed in stays open: it is the application's to close.
    close: () => (owned ? raw.close() : undefined),
    prepare(text: string) {
      const statement = prepare(text);
      return {
        reader: statement.reader,
        all: (parameters: ReadonlyArray<unknown>) => statement.all(toBindable(parameters)),
        run:
          text === "BEGIN IMMEDIATE"
            ? () => beginWithoutWaiting(noWait, statement)
            : (parameters: ReadonlyArray<unknown>) => statement.run(toBindable(parameters)),
        iterate: (parameters: ReadonlyArray<unknown>) => statement.iterate(toBindable(parameters)),
      };
    },
  };
}

/** Take the write lock now or fail with SQLITE_BUSY at once (the caller retries asynchronously). */
function beginWithoutWaiting(noWait: { off: Statement; on: Statement }, statement: Statement) {
  noWait.off.get([]);
  try {
    return statement.run([]);
  } finally {
    noWait.on.get([]);
  }
}

function toBindable(parameters: ReadonlyArray<unknown>): unknown[] {
  return parameters.map((value) => {
    if (value instanceof Date) return value.toISOString();
    if (typeof value === "boolean") return value ? 1 : 0;
    return value;
  });
}
