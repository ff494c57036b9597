import type { Kysely } from "kysely";
import type { Db, Dialect } from "./dialect.js";
import type { DdlRenderer } from "./migrations/table-spec.js";
import type { Schema } from "./schema.js";
import type { ParsedDatabaseUrl } from "./url.js";

/** Connection settings that are not part of the URL. */
export interface OpenOptions {
  /** Most connections the pool may hold (PostgreSQL and MySQL). */
  readonly poolSize: number;
  /** PostgreSQL: the schema every connection works in (its `search_path`). */
  readonly schema?: string;
}

/**
 * What firm-queue needs from one database beyond the claim seam: opening a pool, rendering
 * migrations, and serializing migrators across processes. One small file per database.
 */
export interface DatabaseAdapter {
  readonly dialect: Dialect;
  readonly ddl: DdlRenderer;
  open(url: ParsedDatabaseUrl, options: OpenOptions): Promise<Kysely<Schema>>;
  /** Run `work` while holding a lock that only one migrator, in any process, can hold. */
  withMigrationLock<T>(db: Db, work: (connection: Db) => Promise<T>): Promise<T>;
  /** Run one migration's statements atomically where the database allows it. */
  inMigrationTransaction<T>(connection: Db, work: (trx: Db) => Promise<T>): Promise<T>;
  /**
   * Where the database can announce new ready jobs to every process (PostgreSQL's NOTIFY, sent
   * by a trigger on ready executions): listen on a connection of its own, reconnecting when it is
   * lost. Absent elsewhere: workers rely on polling.
   */
  listenForReadyJobs?(
    url: ParsedDatabaseUrl & { readonly clientConfig?: object },
    onReady: () => void,
    onError: (error: unknown) => void,
  ): Promise<() => Promise<void>>;
}
