import {
  CompiledQuery,
  Kysely,
  MysqlIntrospector,
  MysqlQueryCompiler,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect as KyselyDialect,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import { FirmQueueError } from "../errors.js";
import { bindableParameters } from "./bindable.js";
import type { Db, DialectName } from "./dialect.js";
import { MariadbAdapter } from "./mysql.js";
import type { Schema } from "./schema.js";
import { withSchemaErrors } from "./missing-table.js";

/**
 * One connection of some client firm-queue does not own (a pool's client, an application's
 * transaction): runs SQL with positional parameters and answers in Kysely's result shape.
 */
export interface SqlConnection {
  query(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>>;
  /** Give the connection back to its pool; absent for a connection lent for one transaction. */
  release?(): void;
}

/** Where bridged connections come from: a pool, or a single connection. */
export interface SqlSource {
  acquire(): Promise<SqlConnection>;
  /** Called by `Kysely.destroy()`: releases what firm-queue set up, never the application's pool. */
  close?(): Promise<void>;
}

/**
 * A Kysely on firm-queue's tables that compiles with firm-queue's own Kysely (its dialect's
 * compiler and adapter, so `RETURNING` works on MariaDB) and runs the SQL on `source`. Every
 * parameter is made bindable for `dialect` on the way (see bindable.ts): the same queries work
 * through any client of the database, whatever its settings.
 */
export function bridgeKysely(dialect: DialectName, source: SqlSource): Db {
  return new Kysely<Schema>({ dialect: withSchemaErrors(bridgeDialect(dialect, source)) });
}

/** A source that always lends the same connection: an application's open transaction. */
export function singleConnection(connection: SqlConnection): SqlSource {
  return { acquire: async () => connection };
}

/** Kysely's introspectors take an instance of any schema. */
// biome-ignore lint/suspicious/noExplicitAny: see above
type AnyKysely = Kysely<any>;

function bridgeDialect(dialect: DialectName, source: SqlSource): KyselyDialect {
  const parts = {
    postgres: {
      adapter: () => new PostgresAdapter(),
      compiler: () => new PostgresQueryCompiler(),
      introspector: (db: AnyKysely) => new PostgresIntrospector(db),
    },
    mysql: {
      adapter: () => new MariadbAdapter(),
      compiler: () => new MysqlQueryCompiler(),
      introspector: (db: AnyKysely) => new MysqlIntrospector(db),
    },
    sqlite: {
      adapter: () => new SqliteAdapter(),
      compiler: () => new SqliteQueryCompiler(),
      introspector: (db: AnyKysely) => new SqliteIntrospector(db),
    },
  }[dialect];
  return {
    createAdapter: parts.adapter,
    createQueryCompiler: parts.compiler,
    createIntrospector: parts.introspector,
    createDriver: () => new BridgeDriver(dialect, source),
  };
}

class BridgeConnection implements DatabaseConnection {
  constructor(
    private readonly dialect: DialectName,
    readonly connection: SqlConnection,
  ) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    return this.connection.query(
      compiledQuery.sql,
      bindableParameters(this.dialect, compiledQuery.parameters),
    ) as Promise<QueryResult<R>>;
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new FirmQueueError("firm-queue does not stream queries on an application's connection");
  }
}

class BridgeDriver implements Driver {
  constructor(
    private readonly dialect: DialectName,
    private readonly source: SqlSource,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new BridgeConnection(this.dialect, await this.source.acquire());
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    // A pool firm-queue did not configure runs MySQL's default REPEATABLE READ, whose gap locks
    // make concurrent claimers deadlock: ask for READ COMMITTED per transaction instead.
    if (this.dialect === "mysql") {
      await connection.executeQuery(
        CompiledQuery.raw(
          `SET TRANSACTION ISOLATION LEVEL ${(settings.isolationLevel ?? "read committed").toUpperCase()}`,
        ),
      );
    }
    await connection.executeQuery(CompiledQuery.raw(this.dialect === "mysql" ? "START TRANSACTION" : "BEGIN"));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("COMMIT"));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("ROLLBACK"));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as BridgeConnection).connection.release?.();
  }

  async destroy(): Promise<void> {
    await this.source.close?.();
  }
}
