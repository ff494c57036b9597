import type { Kysely, SelectQueryBuilder } from "kysely";
import type { Schema } from "./schema.js";

/** The databases firm-queue runs on. MariaDB is spoken to as `mysql`. */
export type DialectName = "sqlite" | "postgres" | "mysql";

/** A Kysely handle on firm-queue's tables: the pool, or one transaction. */
export type Db = Kysely<Schema>;

/**
 * The one seam between databases in the claim path. Two workers must never select the same row;
 * how that is guaranteed differs per database and is all this interface abstracts. Every path that
 * selects rows it is about to change runs inside {@link Dialect.beginClaimTx} and wraps that
 * SELECT in {@link Dialect.withSkipLocked}.
 */
export interface Dialect {
  readonly name: DialectName;
  /** Whether `UPDATE … RETURNING` works (MariaDB has it for INSERT and DELETE only). */
  readonly returnsFromUpdate: boolean;
  /**
   * Run `work` in a transaction that may select rows and then change them. SQLite takes the
   * database write lock up front (`BEGIN IMMEDIATE`), which serializes claimers, even across
   * processes; PostgreSQL and MySQL use a plain `BEGIN` and rely on row locks.
   */
  beginClaimTx<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T>;
  /**
   * Lock the selected rows and skip rows another transaction holds (`FOR UPDATE SKIP LOCKED`).
   * A no-op on SQLite, where the write lock taken by `beginClaimTx` already serializes.
   */
  withSkipLocked<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /**
   * Hold the selected rows in share mode until the transaction ends: others may read or
   * share-lock them, but not change or delete them (and `withSkipLocked` selects pass over them).
   * A no-op on SQLite, for the same reason as above.
   */
  withShareLock<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /** The database server's current time (the clock every process compares rows by). */
  databaseTime(db: Db): Promise<Date>;
}
