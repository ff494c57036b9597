// A throwaway PgBouncer in front of a PostgreSQL server, for the pooler tests: transaction
// pooling, trust auth, a random loopback port, run as the postgres service account (PgBouncer
// refuses to run as root). Each statement outside a transaction may land on a different server
// connection, so anything that relies on session state shows up as a failure.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { findExecutable, launch, pathDirs, probeTcp } from "./common.mjs";

/** @typedef {import("./types.js").RunningServer} RunningServer */

/** The pgbouncer binary, or null. */
export function pgbouncerBinary() {
  return findExecutable("pgbouncer", [...pathDirs(), "/usr/sbin", "/usr/local/sbin", "/usr/bin"]);
}

/**
 * @param {{ serverUrl: string, poolSize?: number, roundRobin?: boolean, timeoutMs?: number }} options
 *   serverUrl: the PostgreSQL server's URL (host and port are used; user "postgres", no password);
 *   roundRobin: spread statements over the server connections instead of reusing the last one,
 *   which makes leaked session state visible at once (default true).
 * @returns {Promise<RunningServer>}
 */
export async function startPgbouncer(options) {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error("PgBouncer not found (Debian: apt-get install pgbouncer).");
  const server = new URL(options.serverUrl);
  return launch(
    {
      label: "PgBouncer",
      prefix: "firm-queue-pgbouncer-",
      user: "postgres",
      init: async (dir) => {
        writeFileSync(join(dir, "userlist.txt"), '"postgres" ""\n');
      },
      command: binary,
      args: (port, dir) => {
        writeFileSync(
          join(dir, "pgbouncer.ini"),
          [
            "[databases]",
            `* = host=${server.hostname} port=${server.port}`,
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            `listen_port = ${port}`,
            "unix_socket_dir =",
            "auth_type = trust",
            `auth_file = ${join(dir, "userlist.txt")}`,
            "pool_mode = transaction",
            `default_pool_size = ${options.poolSize ?? 5}`,
            "max_client_conn = 500",
            `server_round_robin = ${options.roundRobin === false ? 0 : 1}`,
            `pidfile = ${join(dir, "pgbouncer.pid")}`,
            "",
          ].join("\n"),
        );
        return [join(dir, "pgbouncer.ini")];
      },
      isReady: (port) => probeTcp(port),
      // SIGINT: "safe shutdown", waits for transactions; the tests' are short.
      shutdownSignal: "SIGTERM",
      url: (port) => `postgres://postgres@127.0.0.1:${port}/`,
    },
    { timeoutMs: options.timeoutMs },
  );
}
