import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";
import { DatabaseTimeoutError } from "../errors.js";
import { preparedStatementName } from "./postgres-prepared.js";

/**
 * invalid_sql_statement_name, duplicate_prepared_statement: what a named statement meets when the
 * server connection under the client changes between calls (a transaction pooler such as
 * PgBouncer), so the statement is missing where it was parsed, or already there where it was not.
 */
const LOST_STATEMENT_CODES = new Set(["26000", "42P05"]);

/**
 * node-postgres' pool, with every statement bounded by `queryTimeout` (when not null). pg's own
 * `query_timeout` only rejects the query and leaves the connection in the pool, where the late
 * answer would be read as the answer to the next query; here the socket is destroyed instead, and
 * the client is thrown away when it is released. The worker's hot statements go as named
 * statements (postgres-prepared.ts) until a server connection shows it cannot keep them.
 */
export function guardedPool(pool: pg.Pool, queryTimeout: number | null): PostgresPool {
  const naming = { on: true };
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let lost: Error | undefined;
      return {
        query: ((text: unknown, parameters?: readonly unknown[]) => {
          if (typeof text !== "string") return client.query(text as string, parameters as unknown[]);
          const sent = send(client, text, parameters as unknown[], naming);
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

/**
 * Send `text` named when it is one of the prepared statements and naming is still on, else
 * unnamed. A named statement that fails because the server connection lost it or had it already
 * (a transaction pooler) did not run: naming goes off for the whole pool, and the statement is
 * sent again unnamed. These statements run in autocommit, so no transaction is left aborted.
 */
async function send(
  client: pg.PoolClient,
  text: string,
  values: unknown[] | undefined,
  naming: { on: boolean },
): Promise<pg.QueryResult> {
  const name = naming.on ? preparedStatementName(text) : undefined;
  if (name === undefined) return client.query(text, values);
  try {
    return await client.query({ name, text, values: values ?? [] });
  } catch (error) {
    if (!LOST_STATEMENT_CODES.has((error as { code?: string })?.code ?? "")) throw error;
    naming.on = false;
    return client.query(text, values);
  }
}

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
