import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";
import { DatabaseTimeoutError, ReadOnlyDatabaseError } from "../errors.js";
import type { ConnectionSource } from "./postgres-failover.js";
import { sendNamedWhenPrepared, type PgStatement, type StatementNaming } from "./postgres-prepared.js";

/**
 * node-postgres' pool, with every statement bounded by `queryTimeout` (when not null). pg's own
 * `query_timeout` only rejects the query and leaves the connection in the pool, where the late
 * answer would be read as the answer to the next query; here the socket is destroyed instead, and
 * the client is thrown away when it is released. The worker's hot statements go as named
 * statements (postgres-prepared.ts) until a server connection shows it cannot keep them. A
 * statement refused because the server is read-only (SQLSTATE 25006: a standby) fails with
 * {@link ReadOnlyDatabaseError} and its connection is thrown away, so that a multi-host source
 * looks for the writable server on the next connect. `address` names the server in that error.
 */
export function guardedPool(pool: ConnectionSource, queryTimeout: number | null, address: () => string): PostgresPool {
  const naming: StatementNaming = { on: true };
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      const query = (statement: PgStatement) => client.query(statement);
      let lost: Error | undefined;
      return {
        query: ((text: unknown, parameters?: readonly unknown[]) => {
          if (typeof text !== "string") return client.query(text as string, parameters as unknown[]);
          const values = (parameters ?? []) as unknown[];
          const sent = sendNamedWhenPrepared(query, text, values, naming).catch((error: unknown) => {
            if ((error as { code?: unknown })?.code !== READ_ONLY_SQL_TRANSACTION) throw error;
            lost = new ReadOnlyDatabaseError([address()], { cause: error });
            throw lost;
          });
          if (queryTimeout === null) return sent;
          return withTimeout(sent, queryTimeout, () => {
            lost = new DatabaseTimeoutError(queryTimeout);
            destroySocket(client);
            return lost;
          });
        }) as unknown as PostgresPoolClient["query"],
        release(destroy?: boolean) {
          client.release(lost ?? destroy);
        },
      };
    },
    end: () => pool.end(),
  };
}

/** SQLSTATE read_only_sql_transaction: a write sent to a hot standby. */
const READ_ONLY_SQL_TRANSACTION = "25006";

/** Settle as `work` does, or reject with `onTimeout()`'s error after `ms`. */
export function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  // The abandoned query rejects later (its socket is gone): that rejection is expected.
  work.catch(() => undefined);
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

function destroySocket(client: pg.PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream;
  stream?.destroy?.();
}
