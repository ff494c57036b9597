// A throwaway PostgreSQL server for tests: fresh cluster in a temp dir, random
// loopback port, trust auth, durability switched off for speed.

import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { canRunAs, launch, pathDirs, realDirOf } from "./common.mjs";

/** @typedef {import("./types.js").ServerOptions} ServerOptions */
/** @typedef {import("./types.js").RunningServer} RunningServer */

const TOOLS = ["initdb", "postgres", "pg_isready"];

/**
 * The directory holding initdb, postgres and pg_isready. PATH wins, so a
 * developer can pick a version; then Debian's versioned dirs, newest first
 * (Debian puts no `postgres` binary on PATH).
 * @returns {string | null}
 */
export function postgresBinDir() {
  const candidates = [];
  const fromPath = realDirOf("initdb", pathDirs());
  if (fromPath) candidates.push(fromPath);
  try {
    const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => `/usr/lib/postgresql/${version}/bin`));
  } catch {
    // not a Debian-style install
  }
  return candidates.find((dir) => TOOLS.every((tool) => realDirOf(tool, [dir]))) ?? null;
}

/** Whether startPostgres() can work on this machine. */
export function postgresAvailable() {
  return postgresBinDir() !== null && canRunAs("postgres");
}

/**
 * @param {ServerOptions} [options]
 * @returns {Promise<RunningServer>}
 */
export async function startPostgres(options) {
  const bin = postgresBinDir();
  if (!bin)
    throw new Error(
      `PostgreSQL not found: need ${TOOLS.join(", ")} on PATH or in /usr/lib/postgresql/<version>/bin (Debian: apt-get install postgresql).`,
    );

  return launch(
    {
      label: "PostgreSQL",
      prefix: "firm-queue-postgres-",
      user: "postgres",
      init: (dir, tool) =>
        // --no-sync: the cluster lives for one test run, no point flushing it.
        tool(join(bin, "initdb"), [
          "-D",
          join(dir, "data"),
          "-U",
          "postgres",
          "--auth=trust",
          "--encoding=UTF8",
          "--locale=C",
          "--no-sync",
        ]),
      command: join(bin, "postgres"),
      args: (port) => [
        "-D",
        "data",
        "-p",
        String(port),
        "-c",
        "listen_addresses=127.0.0.1",
        // No Unix socket: nothing to collide with other runs, and socket
        // paths have a length limit that deep temp dirs can exceed.
        "-c",
        "unix_socket_directories=",
        // Crash safety is worthless for a cluster deleted after the run.
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
        // Each test file opens pools of its own; the default 100 runs out.
        "-c",
        "max_connections=200",
        // JIT compilation only slows down the many tiny queries tests run.
        "-c",
        "jit=off",
      ],
      isReady: (port) =>
        new Promise((resolve) => {
          execFile(
            join(bin, "pg_isready"),
            ["-q", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-t", "1"],
            (error) => resolve(!error),
          );
        }),
      // SIGINT is PostgreSQL's "fast" shutdown: disconnects clients at once.
      shutdownSignal: "SIGINT",
      url: (port) => `postgres://postgres@127.0.0.1:${port}/postgres`,
    },
    options,
  );
}
