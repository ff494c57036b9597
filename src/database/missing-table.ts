import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from "kysely";
import { SchemaOutOfDateError } from "./schema-out-of-date-error.js";

/**
 * The table a driver error says does not exist, or undefined for any other error. One check for
 * the three databases (firm-queue's Kysely speaks to one, but the errors cannot be confused):
 * - SQLite (better-sqlite3, bun:sqlite): `no such table: firm_queue_jobs`;
 * - PostgreSQL: SQLSTATE 42P01, `relation "firm_queue_jobs" does not exist`;
 * - MariaDB: ER_NO_SUCH_TABLE (1146), `Table 'db.firm_queue_jobs' doesn't exist`.
 */
export function missingTableOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, errno, message } = error as { code?: unknown; errno?: unknown; message?: unknown };
  if (typeof message !== "string") return undefined;
  const named =
    code === "42P01"
      ? /relation "(?:[^"]*"\.")?([^"]+)" does not exist/.exec(message)
      : errno === 1146
        ? /Table '(?:[^'.]*\.)?([^']+)' doesn't exist/.exec(message)
        : /^no such table: (?:\w+\.)?(\w+)/.exec(message);
  return named?.[1];
}

/** `error` as a {@link SchemaOutOfDateError} when it is a missing table, else itself. */
function translated(error: unknown): unknown {
  const table = missingTableOf(error);
  return table === undefined ? error : new SchemaOutOfDateError([], table, { cause: error });
}

/**
 * `dialect` with every statement's missing-table error turned into a {@link SchemaOutOfDateError}
 * naming `firm-queue migrate`: an application that enqueues, reads or starts before migrating
 * learns what to do instead of meeting the driver's `no such table`. Wrapping the driver's
 * connections covers every path at once, transactions included (firm-queue's queries all go
 * through its Kysely; it runs no statement of the application's).
 */
export function withSchemaErrors(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new SchemaErrorDriver(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}

/** Wraps each connection the inner driver lends; hands the inner one back for everything else. */
class SchemaErrorDriver implements Driver {
  private readonly inner = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(private readonly driver: Driver) {
    // Savepoints only where the inner driver has them: Kysely checks for the methods.
    if (driver.savepoint === undefined) this.savepoint = undefined;
    if (driver.rollbackToSavepoint === undefined) this.rollbackToSavepoint = undefined;
    if (driver.releaseSavepoint === undefined) this.releaseSavepoint = undefined;
  }

  init(): Promise<void> {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.driver.acquireConnection();
    const wrapped: DatabaseConnection = {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        try {
          return await connection.executeQuery<R>(query);
        } catch (error) {
          throw translated(error);
        }
      },
      async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
        try {
          yield* connection.streamQuery<R>(query, chunkSize);
        } catch (error) {
          throw translated(error);
        }
      },
    };
    this.inner.set(wrapped, connection);
    return wrapped;
  }

  private unwrap(connection: DatabaseConnection): DatabaseConnection {
    return this.inner.get(connection) ?? connection;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.driver.beginTransaction(this.unwrap(connection), settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.commitTransaction(this.unwrap(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.rollbackTransaction(this.unwrap(connection));
  }

  savepoint?: Driver["savepoint"] = (connection, name, compile: QueryCompiler["compileQuery"]) =>
    this.driver.savepoint!(this.unwrap(connection), name, compile);

  rollbackToSavepoint?: Driver["rollbackToSavepoint"] = (connection, name, compile) =>
    this.driver.rollbackToSavepoint!(this.unwrap(connection), name, compile);

  releaseSavepoint?: Driver["releaseSavepoint"] = (connection, name, compile) =>
    this.driver.releaseSavepoint!(this.unwrap(connection), name, compile);

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    const inner = this.unwrap(connection);
    this.inner.delete(connection);
    return this.driver.releaseConnection(inner);
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }
}
