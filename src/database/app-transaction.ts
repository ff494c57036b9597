import type { SqlConnection } from "./bridge.js";
import { betterSqlite3Connection, kyselyConnection, mysqlConnection, pgConnection } from "./clients.js";
import { normalizeResult, returnsRows } from "./client-results.js";
import type { DialectName } from "./dialect.js";
import type { KyselyHandle } from "./handle.js";
import { importDriver } from "./driver-import.js";
import { ConfigurationError } from "../errors.js";

const APP_TRANSACTION = Symbol.for("firm-queue.app-transaction");

/**
 * An application's open transaction, wrapped by one of the `from…` functions below so that
 * `enqueue(args, { transaction })` writes the job through it: the job exists if and only if that
 * transaction commits. firm-queue never begins, commits, rolls back or closes it.
 */
export interface AppTransaction {
  readonly [APP_TRANSACTION]: (dialect: DialectName) => Promise<SqlConnection>;
}

/** What `enqueue`'s `transaction` option takes: a Kysely transaction as is, or a wrapped one. */
export type EnqueueTransaction = KyselyHandle | AppTransaction;

const wrap = (open: (dialect: DialectName) => SqlConnection | Promise<SqlConnection>): AppTransaction => ({
  [APP_TRANSACTION]: async (dialect) => open(dialect),
});

/** A node-postgres `Client` or pool client on which the application ran `BEGIN`. */
// biome-ignore lint/suspicious/noExplicitAny: node-postgres clients have many query overloads; any of them will do
export function fromPg(client: { query(...args: any[]): unknown }): AppTransaction {
  return wrap(() => pgConnection(client as Parameters<typeof pgConnection>[0]));
}

/** A mysql2 connection (callback or promise style) on which the application began a transaction. */
// biome-ignore lint/suspicious/noExplicitAny: mysql2 has callback and promise query overloads; either will do
export function fromMysql2(connection: { query(...args: any[]): unknown }): AppTransaction {
  return wrap(() => mysqlConnection(connection));
}

/**
 * A better-sqlite3 `Database` inside a transaction the application began with `BEGIN` (its
 * `db.transaction(fn)` helper runs `fn` synchronously, so it cannot await an enqueue).
 */
export function fromBetterSqlite3(database: { prepare(source: string): unknown }): AppTransaction {
  return wrap(() => betterSqlite3Connection(database));
}

/** A Kysely transaction; `transaction: trx` works too, this is for symmetry. */
export function fromKysely(transaction: Pick<KyselyHandle, "executeQuery">): AppTransaction {
  return wrap(() => kyselyConnection(transaction));
}

/** A Knex transaction (`knex.transaction(async (trx) => …)`) on PostgreSQL, MySQL/MariaDB or SQLite. */
export function fromKnex(transaction: {
  raw(sql: string, bindings: readonly unknown[]): PromiseLike<unknown>;
}): AppTransaction {
  return wrap((dialect) => ({
    async query(sql, values) {
      // Knex takes `?` placeholders on every database and numbers them itself for PostgreSQL.
      const text = dialect === "postgres" ? sql.replace(/\$\d+/g, "?") : sql;
      return normalizeResult(await transaction.raw(text, [...values]));
    },
  }));
}

/** A Drizzle transaction (`db.transaction(async (tx) => …)`) on node-postgres, mysql2 or better-sqlite3. */
export function fromDrizzle(transaction: object): AppTransaction {
  return wrap(async (dialect) => {
    const { sql } = await importDriver("drizzle-orm", "fromDrizzle", () => import("drizzle-orm"));
    const tx = transaction as Record<"execute" | "all" | "run", (query: unknown) => Promise<unknown> | unknown>;
    return {
      async query(text, values) {
        const pieces = text.split(dialect === "postgres" ? /\$\d+/ : /\?/);
        const chunks = pieces.flatMap((piece, index) =>
          index === 0 ? [sql.raw(piece)] : [sql.param(values[index - 1]), sql.raw(piece)],
        );
        const query = sql.join(chunks);
        if (dialect !== "sqlite") return normalizeResult(await tx.execute!(query));
        return normalizeResult(await (returnsRows(text) ? tx.all!(query) : tx.run!(query)));
      },
    };
  });
}

/**
 * A Prisma interactive transaction (`prisma.$transaction(async (tx) => …)`); tested with Prisma 7
 * and its driver adapters. Statements go through `tx.$queryRawUnsafe` (those that return rows)
 * and `tx.$executeRawUnsafe`, whose placeholders (`$1` on PostgreSQL, `?` elsewhere) are the ones
 * firm-queue compiles.
 */
export function fromPrisma(transaction: {
  $queryRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
}): AppTransaction {
  return wrap(() => ({
    async query(sql, values) {
      if (returnsRows(sql)) return normalizeResult(await transaction.$queryRawUnsafe(sql, ...values));
      const changed = await transaction.$executeRawUnsafe(sql, ...values);
      return { rows: [], numAffectedRows: BigInt(changed as number) };
    },
  }));
}

/** The connection behind `transaction`, or a ConfigurationError for something unrecognized. */
export async function appTransactionConnection(transaction: unknown, dialect: DialectName): Promise<SqlConnection> {
  if (typeof transaction === "object" && transaction !== null) {
    const open = (transaction as Partial<AppTransaction>)[APP_TRANSACTION];
    if (typeof open === "function") return open(dialect);
    if (
      typeof (transaction as KyselyHandle).executeQuery === "function" &&
      typeof (transaction as KyselyHandle).getExecutor === "function"
    ) {
      return kyselyConnection(transaction as KyselyHandle);
    }
  }
  throw new ConfigurationError(
    "enqueue option transaction must be a Kysely transaction or wrapped with fromPg, fromMysql2, fromBetterSqlite3, fromKnex, fromDrizzle or fromPrisma",
  );
}
