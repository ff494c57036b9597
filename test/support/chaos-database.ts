import { inject } from "vitest";
import { mariadbAvailable, startMariadb, type RunningServer } from "../../scripts/servers/mariadb.mjs";
import { postgresAvailable, startPostgres } from "../../scripts/servers/postgres.mjs";
import { TcpProxy } from "./tcp-proxy.js";
import { createDatabaseOn, createTestDatabase, type Dialect, type TestDatabase } from "./test-database.js";

/** The database a chaos run works on, and the faults it can inject there. */
export interface ChaosDatabase {
  /** What the firm-queue processes connect to: through the proxy when there is one. */
  readonly processUrl: string;
  /** What the test itself uses (enqueueing, assertions): never through the proxy. */
  readonly directUrl: string;
  /** In front of a database server; null for SQLite (a file has no connection to cut). */
  readonly proxy: TcpProxy | null;
  /** Restart the server on the same port and data; null when no server of the test's own runs it. */
  readonly restart: (() => Promise<void>) | null;
  /** Why faults are missing, if some are (said once in the run's report). */
  readonly note: string | null;
  close(): Promise<void>;
}

/**
 * Server databases get a throwaway server of their own, because restarting the one the rest of the
 * suite shares would fail other test files; when the server binaries are missing (the run uses a
 * server from the environment), the run does without restarts and says so.
 */
export function ownServerStarter(dialect: Dialect): (() => Promise<RunningServer>) | null {
  if (dialect === "postgres") return postgresAvailable() ? () => startPostgres() : null;
  if (dialect === "mysql") return mariadbAvailable() ? () => startMariadb() : null;
  return null;
}

export async function openChaosDatabase(dialect: Dialect): Promise<ChaosDatabase> {
  if (dialect === "sqlite") {
    const database = await createTestDatabase(dialect);
    return {
      processUrl: database.url,
      directUrl: database.url,
      proxy: null,
      restart: null,
      note: null,
      close: () => database.drop(),
    };
  }
  const starter = ownServerStarter(dialect);
  let server: RunningServer | null = null;
  let database: TestDatabase;
  let note: string | null = null;
  if (starter) {
    server = await starter();
    database = await createDatabaseOn(dialect, server.url);
  } else {
    database = await createTestDatabase(dialect);
    note = `no ${dialect} server binaries here (the run uses ${inject("firmQueueAdminUrls")[dialect] ? "a server from the environment" : "no server"}), so the server is never restarted`;
  }
  const target = new URL(database.url);
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
  const live = server;
  return {
    processUrl: proxy.rewrite(database.url),
    directUrl: database.url,
    proxy,
    restart: live ? () => live.restart() : null,
    note,
    close: async () => {
      await proxy.close();
      await database.drop().catch(() => undefined);
      await live?.stop();
    },
  };
}
