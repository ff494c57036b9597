import { ConfigurationError } from "../errors.js";
import type { DialectName } from "./dialect.js";

/**
 * A node-postgres `Pool`, described by the few members firm-queue uses, so any `pg` 8.x fits
 * without firm-queue's types depending on `@types/pg`.
 */
export interface PgPoolHandle {
  connect(): Promise<unknown>;
  end(): Promise<void>;
  readonly totalCount: number;
  readonly idleCount: number;
  /** The pool's connection settings (a LISTEN connection is opened with them). */
  readonly options?: object;
}

/** A `mysql2` pool, callback style (`mysql2`) or promise style (`mysql2/promise`). */
export interface MysqlPoolHandle {
  getConnection(...args: any[]): unknown;
}

/** A better-sqlite3 `Database`. */
export interface BetterSqlite3Handle {
  prepare(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  readonly inTransaction: boolean;
  readonly open: boolean;
  readonly name: string;
}

/**
 * A Kysely instance (or transaction), described structurally so that any Kysely 0.28.x an
 * application has installed fits, whatever copy firm-queue itself resolves.
 */
export interface KyselyHandle {
  getExecutor(): unknown;
  executeQuery(query: any, queryId?: any): Promise<{ readonly rows: readonly unknown[] }>;
  connection(): { execute<T>(work: (connection: any) => Promise<T>): Promise<T> };
  readonly isTransaction: boolean;
}

/** A database handle the application already holds, passed as `new FirmQueue({ database })`. */
export type DatabaseHandle = PgPoolHandle | MysqlPoolHandle | BetterSqlite3Handle | KyselyHandle;

/** Which kind of handle this is (and, for drivers, which database it speaks to). */
export type HandleKind = "pg-pool" | "mysql2-pool" | "better-sqlite3" | "kysely";

const has = (value: object, key: string, type: string): boolean =>
  typeof (value as Record<string, unknown>)[key] === type;

/** Recognize a handle by its members; a ConfigurationError for anything else. */
export function handleKind(handle: unknown): HandleKind {
  if (typeof handle === "object" && handle !== null) {
    if (has(handle, "getExecutor", "function") && has(handle, "executeQuery", "function")) return "kysely";
    if (
      has(handle, "prepare", "function") &&
      has(handle, "pragma", "function") &&
      has(handle, "inTransaction", "boolean")
    )
      return "better-sqlite3";
    if (has(handle, "connect", "function") && has(handle, "totalCount", "number") && has(handle, "idleCount", "number"))
      return "pg-pool";
    // mysql2/promise wraps the callback pool as `.pool`.
    const core = (handle as { pool?: unknown }).pool;
    const mysqlCore = typeof core === "object" && core !== null ? core : handle;
    if (has(handle, "getConnection", "function") && has(mysqlCore, "config", "object")) return "mysql2-pool";
  }
  throw new UnsupportedHandleError(handle);
}

/** The database a driver handle speaks to (a Kysely instance is asked by compiling a probe). */
export function driverDialect(kind: Exclude<HandleKind, "kysely">): DialectName {
  return ({ "pg-pool": "postgres", "mysql2-pool": "mysql", "better-sqlite3": "sqlite" } as const)[kind];
}

/** How logs and errors name a handle: never its credentials. */
export function describeHandle(handle: unknown): string {
  const kind = handleKind(handle);
  if (kind === "better-sqlite3")
    return `sqlite:${(handle as BetterSqlite3Handle).name} (the application's better-sqlite3 Database)`;
  return {
    "pg-pool": "the application's pg.Pool",
    "mysql2-pool": "the application's mysql2 pool",
    kysely: "the application's Kysely instance",
  }[kind];
}

/** `database` was given something firm-queue cannot use. */
export class UnsupportedHandleError extends ConfigurationError {
  constructor(handle: unknown) {
    const what =
      handle === null ? "null" : typeof handle === "object" ? (handle.constructor?.name ?? "an object") : typeof handle;
    super(`database must be a pg.Pool, a mysql2 pool, a better-sqlite3 Database or a Kysely instance; got ${what}`);
  }
}
