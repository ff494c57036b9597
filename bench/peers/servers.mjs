// Servers for one round of the comparison: each kind started once (lazily) and shared by every
// system on it, each system getting a fresh database of its own. stop() tears everything down.
import pg from "pg";
import { startMariadb } from "../../scripts/servers/mariadb.mjs";
import { startPostgres } from "../../scripts/servers/postgres.mjs";
import { benchDatabase } from "../databases.mjs";
import { redisServerBinary, startRedis } from "../servers/redis.mjs";

/** How long a closed system gets to disconnect from its database before the drop. */
const DISCONNECT_WAIT_MS = 5000;

export class RoundServers {
  /**
   * @param {{ postgresUrl?: string, mysqlUrl?: string }} urls servers of your own, instead of throwaway ones
   * @param {(message: string) => void} progress
   */
  constructor(urls, progress) {
    this.urls = urls;
    this.progress = progress;
    /** @type {Map<string, Promise<{ url: string, stop: () => Promise<void> }>>} */
    this.started = new Map();
    /** @type {Map<string, string>} what each kind of server was, for the report */
    this.notes = new Map();
  }

  /** Why a kind of server cannot be had here, or null when it can. @param {string} kind */
  unavailable(kind) {
    if (kind === "redis" && !redisServerBinary())
      return "redis-server is not installed (Debian: apt-get install redis-server)";
    return null;
  }

  /**
   * A fresh database for one system, with its cleanup.
   * @param {import("./adapter.mjs").ServerKind} kind
   * @returns {Promise<{ url: string, cleanup: () => Promise<void> }>}
   */
  async freshDatabase(kind) {
    if (kind === "sqlite") {
      const database = await benchDatabase("sqlite");
      this.notes.set(kind, database.note);
      return database;
    }
    const server = await this.server(kind);
    // Redis: one system per throwaway server, nothing to create.
    if (kind === "redis") return { url: server.url, cleanup: async () => {} };
    const database = await benchDatabase(kind, server.url);
    if (kind !== "postgres") return { url: database.url, cleanup: database.cleanup };
    return {
      url: database.url,
      cleanup: async () => {
        // DROP DATABASE … WITH (FORCE) kills whatever is still connected, and a library whose
        // pool is still closing would get that as an unhandled 'error' event: let them finish.
        await waitForDisconnects(server.url, new URL(database.url).pathname.slice(1), this.progress);
        await database.cleanup();
      },
    };
  }

  /** @param {"postgres" | "mysql" | "redis"} kind */
  server(kind) {
    let server = this.started.get(kind);
    if (!server) {
      server = this.startServer(kind);
      this.started.set(kind, server);
    }
    return server;
  }

  /** @param {"postgres" | "mysql" | "redis"} kind */
  async startServer(kind) {
    const given = kind === "postgres" ? this.urls.postgresUrl : kind === "mysql" ? this.urls.mysqlUrl : undefined;
    if (given) {
      this.notes.set(kind, `${kind} server given by URL`);
      return { url: given, stop: async () => {} };
    }
    this.progress(`starting a throwaway ${kind} server…`);
    const server =
      kind === "postgres" ? await startPostgres() : kind === "mysql" ? await startMariadb() : await startRedis();
    this.progress(`  ${kind} server up at ${server.url}`);
    this.notes.set(
      kind,
      kind === "redis"
        ? 'throwaway Redis on loopback, no persistence (save "", appendonly no)'
        : `throwaway ${kind === "postgres" ? "PostgreSQL" : "MariaDB"} on loopback, durability off as in the test suite`,
    );
    return server;
  }

  /** Stop every server this round started; safe to call more than once. */
  async stop() {
    const servers = [...this.started.values()];
    this.started.clear();
    // A server that failed to start has cleaned up after itself already.
    const results = await Promise.allSettled(
      servers.map((server) =>
        server.then(
          (running) => running.stop(),
          () => undefined,
        ),
      ),
    );
    for (const result of results)
      if (result.status === "rejected") this.progress(`could not stop a server: ${String(result.reason)}`);
  }
}

/**
 * Wait until nothing is connected to `name` any more (a closed system's pools finishing), at most
 * a few seconds; then say how many connections are left to be cut.
 * @param {string} adminUrl @param {string} name @param {(message: string) => void} progress
 */
async function waitForDisconnects(adminUrl, name, progress) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const deadline = Date.now() + DISCONNECT_WAIT_MS;
    for (;;) {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [name],
      );
      const open = rows[0].n;
      if (open === 0) return;
      if (Date.now() > deadline) {
        progress(`  ${open} connection(s) still open ${DISCONNECT_WAIT_MS / 1000} s after close; the drop cuts them`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.end();
  }
}
