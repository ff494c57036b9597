import type { InsertQueryBuilder, RawBuilder, SelectQueryBuilder } from "kysely";
import type { Db, Dialect, DialectName } from "./dialect.js";
import { retryTransient } from "./transient-errors.js";
import { isUniqueViolation, type UniqueIndex } from "./unique-violation.js";

/**
 * The Dialect of databases with row locks (PostgreSQL, MariaDB): a plain transaction, and
 * `FOR UPDATE SKIP LOCKED` so concurrent claimers pass over each other's rows instead of waiting.
 * `isTransient` recognizes the database's deadlock and lock-timeout errors, which are retried;
 * `shareLock` is how the database spells a shared row lock; `currentTime` reads its clock.
 */
export function rowLockingDialect(
  name: DialectName,
  isTransient: (error: unknown) => boolean,
  shareLock: <DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, O>,
  currentTime: RawBuilder<{ now: Date | string }>,
): Dialect {
  const transaction = <T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> =>
    retryTransient(isTransient, () => db.transaction().execute(work));
  return {
    name,
    returnsFromUpdate: name !== "mysql",
    beginClaimTx: transaction,
    beginWriteTx: transaction,
    withSkipLocked<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
      return query.forUpdate().skipLocked();
    },
    withRowLock<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
      return query.forUpdate();
    },
    withShareLock: shareLock,
    withLatestRead<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
      return name === "mysql" ? shareLock(query) : query;
    },
    ignoringConflicts<DB, TB extends keyof DB, O>(
      query: InsertQueryBuilder<DB, TB, O>,
      column: string | readonly string[],
    ): InsertQueryBuilder<DB, TB, O> {
      // MariaDB has no ON CONFLICT; INSERT IGNORE skips the duplicate row with a warning.
      return name === "mysql"
        ? query.ignore()
        : query.onConflict((conflict) =>
            conflict.columns((typeof column === "string" ? [column] : column) as never).doNothing(),
          );
    },
    isUniqueViolation: (error: unknown, index: UniqueIndex) => isUniqueViolation(name, error, index),
    async databaseTime(db: Db): Promise<Date> {
      const { rows } = await currentTime.execute(db);
      const value = rows[0]!.now;
      return value instanceof Date ? value : new Date(value);
    },
  };
}
