// A throwaway PgBouncer in transaction pooling mode in front of a PostgreSQL server, for tests of
// setups where the application's pool cannot hold a LISTEN (Debian: apt-get install pgbouncer).

import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { canRunAs, findExecutable, launch, pathDirs } from "./common.mjs";

/** @typedef {import("./types.js").ServerOptions} ServerOptions */
/** @typedef {import("./types.js").RunningServer} RunningServer */

const binary = () => findExecutable("pgbouncer", [...pathDirs(), "/usr/sbin", "/usr/bin"]);

/** Whether startPgBouncer() can work on this machine. */
export function pgbouncerAvailable() {
  return binary() !== null && canRunAs("postgres");
}

/**
 * @param {string} targetUrl  postgres://user@host:port/db of the server behind it (trust auth)
 * @param {ServerOptions} [options]
 * @returns {Promise<RunningServer>}
 */
export async function startPgBouncer(targetUrl, options) {
  const command = binary();
  if (!command) throw new Error("PgBouncer not found (Debian: apt-get install pgbouncer).");
  const target = new URL(targetUrl);
  const user = decodeURIComponent(target.username || "postgres");
  return launch(
    {
      label: "PgBouncer",
      prefix: "firm-queue-pgbouncer-",
      user: "postgres",
      init: async () => undefined,
      command,
      args: (port, dir) => {
        // The port is known only now; PgBouncer reads everything from its ini file.
        writeFileSync(join(dir, "userlist.txt"), `"${user}" ""\n`, { mode: 0o644 });
        writeFileSync(
          join(dir, "pgbouncer.ini"),
          [
            "[databases]",
            `* = host=${target.hostname} port=${target.port || 5432}`,
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            `listen_port = ${port}`,
            "unix_socket_dir =",
            "auth_type = trust",
            `auth_file = ${join(dir, "userlist.txt")}`,
            "pool_mode = transaction",
            "max_client_conn = 200",
            "default_pool_size = 20",
            "",
          ].join("\n"),
          { mode: 0o644 },
        );
        return [join(dir, "pgbouncer.ini")];
      },
      isReady: (port) =>
        new Promise((resolve) => {
          const socket = connect({ host: "127.0.0.1", port }, () => {
            socket.destroy();
            resolve(true);
          });
          socket.on("error", () => resolve(false));
        }),
      shutdownSignal: "SIGINT",
      url: (port) => {
        const url = new URL(targetUrl);
        url.hostname = "127.0.0.1";
        url.port = String(port);
        return url.toString();
      },
    },
    options,
  );
}
