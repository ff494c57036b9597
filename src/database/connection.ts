import { resolve } from "node:path";
import type { Kysely } from "kysely";
import { ConfigurationError, DatabaseUrlError, redactUrl } from "../errors.js";
import { DEFAULT_CONNECTION_SETTINGS, type ConnectionSettings } from "./connection-settings.js";
import type { DatabaseAdapter, OpenOptions } from "./adapter.js";
import { JobsReadySignal } from "./jobs-ready.js";
import type { EndedJobsListener } from "./ended-jobs.js";
import type { Db, Dialect, DialectName } from "./dialect.js";
import { DatabaseClock } from "./clock.js";
import type { Schema } from "./schema.js";
import { parseDatabaseUrl } from "./url.js";
import { DEFAULT_TABLE_PREFIX, TableNames } from "./table-prefix.js";
import { wakingAfterCommit } from "./ready-writes.js";

/** An open pool on firm-queue's database, with the dialect that knows how to claim on it. */
export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: Dialect;
  readonly adapter: DatabaseAdapter;
  /** The URL with any password hidden, for logs. */
  readonly displayUrl: string;
  /** PostgreSQL: the schema holding firm-queue's tables, when one was chosen. */
  readonly schema?: string;
  /**
   * The names of firm-queue's tables here (see table-prefix.ts). `db` already rewrites every
   * query to them; code that builds a Kysely of its own on this database applies them too.
   */
  readonly tableNames: TableNames;
  /** Where the database announces that awaited jobs ended (PostgreSQL); absent: waiters poll. */
  readonly listenForEndedJobs?: EndedJobsListener;
  /** Wakes this process's workers when jobs may be ready (shared by every user of the pool). */
  readonly jobsReady: JobsReadySignal;
  /**
   * Run `work` in a transaction that selects rows and then changes them (claims, promotions,
   * recovery, failed-job operations): {@link Dialect.beginClaimTx}. With `writeTransaction`, the
   * only way firm-queue opens a transaction; models take the open transaction as their first
   * parameter and never open one themselves.
   */
  claimTransaction<T>(work: (trx: Db) => Promise<T>): Promise<T>;
  /** Run `work` in a transaction that writes without claiming (enqueue, recurring tasks): {@link Dialect.beginWriteTx}. */
  writeTransaction<T>(work: (trx: Db) => Promise<T>): Promise<T>;
  /** The database's clock: the time to write into rows and compare rows with. */
  readonly clock: DatabaseClock;
  /** Most connections the pool may open now. */
  readonly poolSize: number;
  /** Let the pool open up to `poolSize` connections, if that is more than it may now. */
  ensurePoolSize(poolSize: number): void;
  close(): Promise<void>;
}

/** How to open each database; each adapter loads its driver only when used. */
export const ADAPTERS: Record<DialectName, () => Promise<DatabaseAdapter>> = {
  // Each adapter loads its driver on open, so an app on PostgreSQL never loads better-sqlite3.
  sqlite: async () => (await import("./sqlite.js")).sqliteAdapter,
  postgres: async () => (await import("./postgres.js")).postgresAdapter,
  mysql: async () => (await import("./mysql.js")).mysqlAdapter,
};

/**
 * SQLite files opened in this process, shared by every FirmQueue on the same file. Two
 * connections to one file in one process would deadlock: better-sqlite3 waits for the write
 * lock synchronously, so the connection holding it could never get to commit.
 */
const sharedSqlite = new Map<
  string,
  { database: Promise<Kysely<Schema>>; jobsReady: JobsReadySignal; users: number }
>();

/** Whether processes on `url` keep a LISTEN connection beside their pool (PostgreSQL). */
export async function keepsListenConnection(url: string): Promise<boolean> {
  const adapter = await ADAPTERS[parseDatabaseUrl(url).dialect]();
  return adapter.listenForReadyJobs !== undefined;
}

/** What {@link openDatabase} takes beside the URL. */
export interface OpenDatabaseOptions extends Partial<Omit<ConnectionSettings, "poolSize">> {
  readonly poolSize: number;
  /**
   * Where the LISTEN connection goes (PostgreSQL), when not `url`: a direct connection to the
   * server beside a transaction pooler such as PgBouncer, which cannot hold a LISTEN.
   */
  readonly listenUrl?: string | undefined;
  /** PostgreSQL: the schema every connection works in (its `search_path`). */
  readonly schema?: string | undefined;
  /** What firm-queue's table names start with; default `firm_queue_`. */
  readonly tablePrefix?: string | undefined;
}

/** Open a pool on `url` (see `parseDatabaseUrl` for the accepted forms). */
export async function openDatabase(url: string, openOptions: OpenDatabaseOptions): Promise<Database> {
  const parsed = parseDatabaseUrl(url);
  const tableNames = new TableNames(openOptions.tablePrefix ?? DEFAULT_TABLE_PREFIX);
  if (openOptions.schema !== undefined && parsed.dialect !== "postgres") {
    throw new ConfigurationError(`The schema option is for PostgreSQL; ${redactUrl(url)} is ${parsed.dialect}`);
  }
  // Behind a transaction-mode pooler the pool's URL cannot hold a LISTEN: listenUrl can.
  const listenTo = openOptions.listenUrl === undefined ? parsed : parseDatabaseUrl(openOptions.listenUrl);
  if (listenTo.dialect !== parsed.dialect)
    throw new DatabaseUrlError(
      openOptions.listenUrl!,
      `listenUrl must name the same kind of database as the databaseUrl (${parsed.dialect})`,
    );
  const options: OpenOptions = {
    poolSize: openOptions.poolSize,
    queryTimeout:
      openOptions.queryTimeout === undefined ? DEFAULT_CONNECTION_SETTINGS.queryTimeout : openOptions.queryTimeout,
    connectTimeout: openOptions.connectTimeout ?? DEFAULT_CONNECTION_SETTINGS.connectTimeout,
    keepAliveDelay: openOptions.keepAliveDelay ?? DEFAULT_CONNECTION_SETTINGS.keepAliveDelay,
    ...(openOptions.schema === undefined ? {} : { schema: openOptions.schema }),
  };
  const adapter = await ADAPTERS[parsed.dialect]();
  const shareKey =
    parsed.dialect === "sqlite" && parsed.filename !== ":memory:" ? resolve(parsed.filename!) : undefined;
  let db: Kysely<Schema>;
  let jobsReady: JobsReadySignal;
  let release: () => Promise<void>;
  const listen = adapter.listenForReadyJobs
    ? (onReady: () => void, onError: (error: unknown) => void) =>
        adapter.listenForReadyJobs!(listenTo, { ...options, readyChannel: tableNames.readyChannel }, onReady, onError)
    : undefined;
  const listenForEndedJobs: EndedJobsListener | undefined = adapter.listenForEndedJobs
    ? (onEnded, onError) =>
        adapter.listenForEndedJobs!(listenTo, { ...options, endedChannel: tableNames.endedChannel }, onEnded, onError)
    : undefined;
  if (shareKey === undefined) {
    db = await adapter.open(parsed, options);
    jobsReady = new JobsReadySignal(listen);
    release = async () => {
      await jobsReady.close();
      await db.destroy();
    };
  } else {
    let entry = sharedSqlite.get(shareKey);
    if (!entry) {
      entry = { database: adapter.open(parsed, options), jobsReady: new JobsReadySignal(listen), users: 0 };
      sharedSqlite.set(shareKey, entry);
    }
    entry.users++;
    const shared = entry;
    jobsReady = shared.jobsReady;
    try {
      db = await shared.database;
    } catch (error) {
      if (--shared.users === 0) sharedSqlite.delete(shareKey);
      throw error;
    }
    release = async () => {
      if (--shared.users > 0) return;
      sharedSqlite.delete(shareKey);
      await db.destroy();
    };
  }
  return assembleDatabase({
    db,
    adapter,
    displayUrl: redactUrl(url),
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    tableNames,
    jobsReady,
    ...(listenForEndedJobs ? { listenForEndedJobs } : {}),
    poolSize: options.poolSize,
    release,
  });
}

/**
 * A {@link Database} from an open Kysely handle and its adapter, whoever opened the handle (a URL
 * here, an application's pool in open-handle.ts): the clock measured, the two transaction kinds,
 * the pool's size (grown on demand when firm-queue owns the pool), and a `close()` that runs
 * `release` once.
 */
export async function assembleDatabase(parts: {
  readonly db: Kysely<Schema>;
  readonly adapter: DatabaseAdapter;
  readonly displayUrl: string;
  readonly schema?: string;
  readonly tableNames: TableNames;
  readonly jobsReady: JobsReadySignal;
  readonly listenForEndedJobs?: EndedJobsListener;
  /** The pool's size when firm-queue opened it; absent for an application's own handle. */
  readonly poolSize?: number;
  readonly release: () => Promise<void>;
}): Promise<Database> {
  const { adapter, release, tableNames } = parts;
  // The pool's Kysely stays as opened (release destroys that one, possibly shared by several
  // prefixes on one SQLite file); firm-queue's queries go through the renaming one.
  const db = tableNames.apply(parts.db);
  const dialect = namedDialect(adapter.dialect, tableNames);
  const clock = new DatabaseClock(() => dialect.databaseTime(db));
  // Measured before first use; a database that does not answer yet is measured again later. The
  // first round trip may include opening the connection, so a second one, on a warm connection,
  // usually gives the tighter measurement that the clock keeps.
  await clock.sync().catch(() => undefined);
  await clock.sync().catch(() => undefined);
  let closed: Promise<void> | undefined;
  let poolSize = parts.poolSize ?? Number.POSITIVE_INFINITY;
  return {
    clock,
    db,
    dialect,
    claimTransaction: (work) => wakingAfterCommit(parts.jobsReady, (run) => dialect.beginClaimTx(db, run), work),
    writeTransaction: (work) => wakingAfterCommit(parts.jobsReady, (run) => dialect.beginWriteTx(db, run), work),
    adapter,
    displayUrl: parts.displayUrl,
    ...(parts.schema === undefined ? {} : { schema: parts.schema }),
    tableNames,
    jobsReady: parts.jobsReady,
    ...(parts.listenForEndedJobs ? { listenForEndedJobs: parts.listenForEndedJobs } : {}),
    get poolSize() {
      return poolSize;
    },
    ensurePoolSize(wanted: number) {
      // An application's own pool is sized by the application.
      if (wanted <= poolSize || parts.poolSize === undefined) return;
      // SQLite has no pool to grow: one shared connection serves every caller.
      adapter.resizePool?.(parts.db, wanted);
      poolSize = wanted;
    },
    close: () => (closed ??= release()),
  };
}

/** The dialect with unique violations recognized by the index names of this database's prefix. */
function namedDialect(dialect: Dialect, tableNames: TableNames): Dialect {
  if (tableNames.isDefault) return dialect;
  return {
    ...dialect,
    isUniqueViolation: (error, index) => dialect.isUniqueViolation(error, tableNames.uniqueIndex(index)),
  };
}
