// A throwaway MariaDB server for tests (the "mysql" dialect): fresh data dir in
// a temp dir, random loopback port, passwordless root, durability traded for speed.

import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { canRunAs, findExecutable, launch, pathDirs, probeTcp } from "./common.mjs";

/** @typedef {import("./types.js").ServerOptions} ServerOptions */
/** @typedef {import("./types.js").RunningServer} RunningServer */

// sbin dirs are often not on a normal user's PATH, but that is where mariadbd lives.
const SBIN_DIRS = ["/usr/sbin", "/usr/local/sbin", "/opt/homebrew/sbin"];

/** @returns {{ server: string, installDb: string } | null} */
export function mariadbBinaries() {
  const server = findExecutable("mariadbd", [...pathDirs(), ...SBIN_DIRS]);
  if (!server) return null;
  // mariadb-install-db sits in bin/ (packages) or scripts/ (tarballs).
  const installDb = findExecutable("mariadb-install-db", [
    ...pathDirs(),
    "/usr/bin",
    dirname(server),
    join(dirname(dirname(server)), "scripts"),
  ]);
  return installDb ? { server, installDb } : null;
}

/** Whether startMariadb() can work on this machine. */
export function mariadbAvailable() {
  return mariadbBinaries() !== null && canRunAs("mysql");
}

// Options for both the bootstrap (mariadb-install-db passes unknown options on
// to mariadbd) and the server, so the data files are created the way they are used.
// --no-defaults must come first: never read the machine's /etc/mysql config.
const COMMON_OPTIONS = ["--no-defaults"];

/** @param {string} dir @param {number} port @param {ServerOptions} [options] */
function serverOptions(dir, port, options) {
  return [
    ...COMMON_OPTIONS,
    `--datadir=${join(dir, "data")}`,
    // Its own temp files in its own dir: servers of parallel runs (and leftovers in /tmp) never collide.
    `--tmpdir=${dir}`,
    `--socket=${join(dir, "mariadb.sock")}`,
    `--pid-file=${join(dir, "mariadb.pid")}`,
    `--port=${port}`,
    `--bind-address=${["127.0.0.1", ...(options?.extraListenAddresses ?? [])].join(",")}`,
    // No DNS lookups (there may be no DNS at all); accounts match by IP.
    "--skip-name-resolve",
    "--skip-log-bin",
    // Crash safety is worthless for data deleted after the run; a benchmark of what users run
    // keeps it: the redo log flushed at every commit (the default), doublewrite on.
    `--innodb-flush-log-at-trx-commit=${options?.durable ? 1 : 2}`,
    `--innodb-doublewrite=${options?.durable ? 1 : 0}`,
    // On shutdown, skip flushing pages to data files we are about to delete.
    "--innodb-fast-shutdown=2",
    "--max-connections=300",
    // Tests drop connections abruptly; never let that block 127.0.0.1.
    "--max-connect-errors=1000000",
    "--character-set-server=utf8mb4",
    `--init-file=${join(dir, "root-over-tcp.sql")}`,
    // Benchmarks' extra server options (e.g. performance_schema), last so they win.
    ...Object.entries(options?.mariadbOptions ?? {}).map(([name, value]) => `--${name}=${value}`),
  ];
}

// mariadb-install-db's "normal" root already includes root@127.0.0.1 on
// current versions; say it explicitly so a URL like mysql://root@127.0.0.1:PORT/
// keeps working whatever the version's defaults are. Run as the server's
// --init-file (before it accepts connections): the bootstrap's --extra-file
// runs without grant tables and rejects CREATE USER.
const ROOT_OVER_TCP = `
CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
`;

/**
 * The passwordless root, also from a network (CIDR a.b.c.d/len, written as MariaDB's address/mask).
 * @param {string} network
 */
function rootFrom(network) {
  const [address, length] = network.split("/");
  const bits = Number(length ?? 32);
  const mask = [0, 1, 2, 3].map((octet) => (0xff << (8 - Math.min(8, Math.max(0, bits - octet * 8)))) & 0xff).join(".");
  const host = `${address}/${mask}`;
  return `CREATE USER IF NOT EXISTS 'root'@'${host}';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'${host}' WITH GRANT OPTION;\n`;
}

/**
 * @param {ServerOptions} [options]
 * @returns {Promise<RunningServer>}
 */
export async function startMariadb(options) {
  const binaries = mariadbBinaries();
  if (!binaries)
    throw new Error(
      "MariaDB not found: need mariadbd (PATH or /usr/sbin) and mariadb-install-db (Debian: apt-get install mariadb-server).",
    );

  return launch(
    {
      label: "MariaDB",
      prefix: "firm-queue-mariadb-",
      user: "mysql",
      init: async (dir, tool) => {
        writeFileSync(
          join(dir, "root-over-tcp.sql"),
          ROOT_OVER_TCP + (options?.clientNetworks ?? []).map(rootFrom).join(""),
        );
        await tool(binaries.installDb, [
          ...COMMON_OPTIONS,
          `--datadir=${join(dir, "data")}`,
          `--tmpdir=${dir}`,
          // "normal": a passwordless root. The default ("socket") only lets
          // the OS root user in, through the Unix socket.
          "--auth-root-authentication-method=normal",
          "--skip-test-db",
          "--skip-name-resolve",
          `--innodb-doublewrite=${options?.durable ? 1 : 0}`,
        ]);
      },
      command: binaries.server,
      args: (port, dir) => serverOptions(dir, port, options),
      isReady: greets,
      shutdownSignal: "SIGTERM",
      url: (port) => `mysql://root@127.0.0.1:${port}/`,
    },
    options,
  );
}

/**
 * True once the server sends its protocol greeting (protocol version 10) on a
 * fresh TCP connection; an error packet or silence means not ready yet.
 * @param {number} port
 * @returns {Promise<boolean>}
 */
function greets(port) {
  // Packet: 3-byte length, 1-byte sequence, then the payload's first byte.
  return probeTcp(port, { ready: (data) => data.length > 4 && data[4] === 10 });
}
