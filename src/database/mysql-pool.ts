import type { MysqlPool, MysqlPoolConnection } from "kysely";
import type { Pool, PoolConnection } from "mysql2";
import { DatabaseTimeoutError } from "../errors.js";

type Callback = (error: unknown, result: unknown) => void;

/**
 * mysql2's pool, with every statement bounded by `queryTimeout` (when not null). mysql2's own
 * per-query `timeout` answers the caller but leaves the command at the head of the connection's
 * queue; here the connection is destroyed instead (which also takes it out of the pool), so the
 * next query gets a fresh one.
 */
export function guardedPool(pool: Pool, queryTimeout: number | null): MysqlPool {
  if (queryTimeout === null) return pool as unknown as MysqlPool;
  return {
    getConnection(callback) {
      pool.getConnection((error, connection) => {
        if (error) return callback(error, connection as unknown as MysqlPoolConnection);
        callback(null, guardConnection(connection, queryTimeout));
      });
    },
    end: (callback) => pool.end(callback),
  };
}

function guardConnection(connection: PoolConnection, queryTimeout: number): MysqlPoolConnection {
  let lost = false;
  const raw = connection as unknown as { query(sql: string, parameters: unknown[], callback?: Callback): unknown };
  return {
    query: ((sql: string, parameters: unknown[], callback?: Callback) => {
      if (callback === undefined) return raw.query(sql, parameters);
      let settled = false;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        lost = true;
        connection.destroy();
        callback(new DatabaseTimeoutError(queryTimeout), undefined);
      }, queryTimeout);
      raw.query(sql, parameters, (error, result) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        callback(error, result);
      });
      return undefined;
    }) as MysqlPoolConnection["query"],
    release() {
      // A destroyed connection has already left the pool.
      if (!lost) connection.release();
    },
  };
}
