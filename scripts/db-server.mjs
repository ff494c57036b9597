#!/usr/bin/env node
// Runs one throwaway database server in the foreground until Ctrl-C, for
// trying firm-queue by hand or pointing a test run at a long-lived server.
//
//   node scripts/db-server.mjs postgres|mariadb     (npm run db:postgres / db:mariadb)

import { readFileSync } from "node:fs";
import { startMariadb } from "./servers/mariadb.mjs";
import { startPostgres } from "./servers/postgres.mjs";

const kinds = {
  postgres: { label: "PostgreSQL", start: startPostgres, testEnv: "FIRM_QUEUE_TEST_POSTGRES_URL" },
  mariadb: { label: "MariaDB", start: startMariadb, testEnv: "FIRM_QUEUE_TEST_MYSQL_URL" },
};
const aliases = { postgresql: "postgres", pg: "postgres", mysql: "mariadb" };

const requested = process.argv[2] ?? "";
const kind =
  kinds[/** @type {keyof typeof kinds} */ (aliases[/** @type {keyof typeof aliases} */ (requested)] ?? requested)];
if (!kind) {
  console.error("usage: node scripts/db-server.mjs postgres|mariadb");
  process.exit(2);
}

const started = Date.now();
/** @type {import("./servers/types.js").RunningServer} */
let server;
try {
  server = await kind.start();
} catch (error) {
  console.error(`Could not start ${kind.label}: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}

console.log(`${kind.label} is up (${((Date.now() - started) / 1000).toFixed(1)} s): ${server.url}`);
console.log("");
console.log("Use it from another shell:");
console.log(`  export FIRM_QUEUE_DATABASE_URL=${server.url}`);
console.log(`  export ${kind.testEnv}=${server.url}   # the test suite then reuses this server`);
console.log("");
console.log("Ctrl-C stops it and deletes its data.");

// The server process does not keep us alive (it is unref'd), so this does.
const keepAlive = setInterval(() => {}, 1 << 30);

let stopping = false;
/** @param {string} why @param {number} code */
async function shutdown(why, code) {
  if (stopping) return;
  stopping = true;
  clearInterval(keepAlive);
  console.log(`\n${why}: stopping ${kind.label}...`);
  await server.stop();
  console.log("Stopped, data removed.");
  process.exit(code);
}

process.on("SIGINT", () => void shutdown("Interrupted", 0));
process.on("SIGTERM", () => void shutdown("Terminated", 0));
process.on("SIGHUP", () => void shutdown("Hung up", 0));
void server.exited.then(() => {
  if (stopping) return;
  // Show why before stop() deletes the log along with the data.
  const log = readFileSync(server.logFile, "utf8").trimEnd().split("\n").slice(-20).join("\n");
  console.error(`\n${kind.label} exited unexpectedly. Last lines of its log:\n${log}`);
  void shutdown("Server gone", 1);
});
