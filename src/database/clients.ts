import { CompiledQuery } from "kysely";
import type { SqlConnection, SqlSource } from "./bridge.js";
import { normalizeResult, returnsRows } from "./client-results.js";
import type { KyselyHandle } from "./handle.js";
import { importDriver } from "./driver-import.js";
import { sendNamedWhenPrepared, type PgStatement, type StatementNaming } from "./postgres-prepared.js";

/** What firm-queue calls on a node-postgres client or pool client. */
interface PgClientLike {
  query(config: PgStatement & { types?: unknown }): Promise<unknown>;
  release?(error?: unknown): void;
}

const INT8_OID = 20;

/** The parsers of {@link int8AsNumber}, made once per process (a failed import is tried again). */
let int8Types: Promise<unknown> | undefined;

/**
 * Type parsers for firm-queue's queries on a client it did not configure: BIGINT ids and counts
 * as numbers (as on firm-queue's own pools), everything else as the driver's defaults. Passed
 * per query, so the application's own queries keep their settings.
 */
function int8AsNumber(): Promise<unknown> {
  int8Types ??= importDriver("pg", "PostgreSQL databases", () => import("pg")).then(
    ({ default: pg }) => ({
      getTypeParser: (oid: number, format?: "text" | "binary") =>
        oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format as "text"),
    }),
    (error: unknown) => {
      int8Types = undefined;
      throw error;
    },
  );
  return int8Types;
}

/**
 * A node-postgres client: inside the application's BEGIN, or checked out of a pool (`pooled`,
 * with its `release` and the pool's {@link StatementNaming}). Only a pooled client, which runs
 * firm-queue's statements in autocommit, sends the worker's hot statements named
 * (postgres-prepared.ts): in the application's transaction a statement a pooler had lost would
 * abort that transaction.
 */
export async function pgConnection(
  client: PgClientLike,
  pooled?: { release: () => void; naming: StatementNaming },
): Promise<SqlConnection> {
  const types = await int8AsNumber();
  const send = (statement: PgStatement) => client.query({ ...statement, types });
  return {
    query: async (text, values) =>
      normalizeResult(
        await (pooled
          ? sendNamedWhenPrepared(send, text, [...values], pooled.naming)
          : send({ text, values: [...values] })),
      ),
    ...(pooled ? { release: pooled.release } : {}),
  };
}

/** An event emitter's two methods, as pg clients have them. */
interface Listenable {
  on?(event: "error", listener: () => void): unknown;
  removeListener?(event: "error", listener: () => void): unknown;
}

/**
 * Connections checked out of an application's `pg.Pool`; the pool itself is never ended. A
 * checked-out client carries none of the pool's listeners, so while firm-queue holds one it
 * listens for the client's 'error' itself: a connection lost then fails the query on it, not the
 * application's process. The listener goes when the client goes back.
 */
export function pgPoolSource(pool: { connect(): Promise<unknown> }): SqlSource {
  const ignore = (): void => undefined;
  const naming: StatementNaming = { on: true };
  return {
    async acquire() {
      const client = (await pool.connect()) as PgClientLike & Listenable;
      client.on?.("error", ignore);
      const release = () => {
        client.removeListener?.("error", ignore);
        client.release?.();
      };
      return pgConnection(client, { release, naming });
    },
  };
}

/** A mysql2 connection, callback style or promise style (whose core is `.connection`). */
interface MysqlCoreConnection {
  query(
    options: { sql: string; values: unknown[]; timezone: string },
    callback: (error: unknown, result: unknown) => void,
  ): void;
  release?(): void;
}

/** A mysql2 connection; reads DATETIME as UTC, as firm-queue writes it, whatever its settings. */
export function mysqlConnection(connection: object, release?: () => void): SqlConnection {
  const core = ((connection as { connection?: MysqlCoreConnection }).connection ?? connection) as MysqlCoreConnection;
  return {
    query: (sql, values) =>
      new Promise((resolve, reject) =>
        core.query({ sql, values: [...values], timezone: "Z" }, (error, result) =>
          error ? reject(error) : resolve(normalizeResult(result)),
        ),
      ),
    ...(release ? { release } : {}),
  };
}

/** Connections of an application's mysql2 pool (either style); the pool itself is never ended. */
export function mysqlPoolSource(handle: object): SqlSource {
  const pool = ((handle as { pool?: object }).pool ?? handle) as {
    getConnection(callback: (error: unknown, connection: MysqlCoreConnection) => void): void;
  };
  return {
    acquire: () =>
      new Promise((resolve, reject) =>
        pool.getConnection((error, connection) =>
          error ? reject(error) : resolve(mysqlConnection(connection, () => connection.release?.())),
        ),
      ),
  };
}

/** A better-sqlite3 Database inside the application's transaction. */
export function betterSqlite3Connection(database: { prepare(sql: string): unknown }): SqlConnection {
  return {
    async query(sql, values) {
      const statement = database.prepare(sql) as {
        all(...values: unknown[]): unknown[];
        run(...values: unknown[]): unknown;
      };
      return normalizeResult(returnsRows(sql) ? statement.all(...values) : statement.run(...values));
    },
  };
}

/** A Kysely instance or transaction from any copy of Kysely 0.28. */
export function kyselyConnection(kysely: Pick<KyselyHandle, "executeQuery">, release?: () => void): SqlConnection {
  return {
    query: (sql, values) =>
      kysely.executeQuery(CompiledQuery.raw(sql, [...values])) as ReturnType<SqlConnection["query"]>,
    ...(release ? { release } : {}),
  };
}

/** Connections of an application's Kysely instance, each held until firm-queue releases it. */
export function kyselySource(kysely: KyselyHandle): SqlSource {
  return {
    acquire: () =>
      new Promise((resolve, reject) => {
        kysely
          .connection()
          .execute(
            (connection: Pick<KyselyHandle, "executeQuery">) =>
              new Promise<void>((release) => resolve(kyselyConnection(connection, release))),
          )
          .catch(reject);
      }),
  };
}
