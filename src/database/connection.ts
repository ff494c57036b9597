import type { Kysely } from "kysely";
import { redactUrl } from "../errors.js";
import type { DatabaseAdapter } from "./adapter.js";
import type { Dialect, DialectName } from "./dialect.js";
import type { Schema } from "./schema.js";
import { parseDatabaseUrl } from "./url.js";

/** An open pool on firm-queue's database, with the dialect that knows how to claim on it. */
export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: Dialect;
  readonly adapter: DatabaseAdapter;
  /** The URL with any password hidden, for logs. */
  readonly displayUrl: string;
  close(): Promise<void>;
}

const ADAPTERS: Record<DialectName, () => Promise<DatabaseAdapter>> = {
  // Each adapter loads its driver on open, so an app on PostgreSQL never loads better-sqlite3.
  sqlite: async () => (await import("./sqlite.js")).sqliteAdapter,
  postgres: async () => (await import("./postgres.js")).postgresAdapter,
  mysql: async () => (await import("./mysql.js")).mysqlAdapter,
};

/** Open a pool on `url` (see `parseDatabaseUrl` for the accepted forms). */
export async function openDatabase(url: string, options: { poolSize: number }): Promise<Database> {
  const parsed = parseDatabaseUrl(url);
  const adapter = await ADAPTERS[parsed.dialect]();
  const db = await adapter.open(parsed, options);
  let closed: Promise<void> | undefined;
  return {
    db,
    dialect: adapter.dialect,
    adapter,
    displayUrl: redactUrl(url),
    close: () => (closed ??= db.destroy()),
  };
}
