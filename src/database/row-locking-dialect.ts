import type { RawBuilder, SelectQueryBuilder } from "kysely";
import type { Db, Dialect, DialectName } from "./dialect.js";
import { retryTransient } from "./transient-errors.js";

/**
 * The Dialect of databases with row locks (PostgreSQL, MariaDB): a plain transaction, and
 * `FOR UPDATE SKIP LOCKED` so concurrent claimers pass over each other's rows instead of waiting.
 * `isTransient` recognizes the database's deadlock and lock-timeout errors, which are retried.
 */
export function rowLockingDialect(
  name: DialectName,
  isTransient: (error: unknown) => boolean,
  shareLock: <DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, O>,
  currentTime: RawBuilder<{ now: Date | string }>,
): Dialect {
  return {
    name,
    returnsFromUpdate: name !== "mysql",
    beginClaimTx<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
      return retryTransient(isTransient, () => db.transaction().execute(work));
    },
    withSkipLocked<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
      return query.forUpdate().skipLocked();
    },
    withShareLock: shareLock,
    async databaseTime(db: Db): Promise<Date> {
      const { rows } = await currentTime.execute(db);
      const value = rows[0]!.now;
      return value instanceof Date ? value : new Date(value);
    },
  };
}
