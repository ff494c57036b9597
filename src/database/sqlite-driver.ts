import { createRequire } from "node:module";
import { FirmQueueError } from "../errors.js";
import { bunSqliteConnection, loadBunSqlite } from "./bun-sqlite.js";
import { importDriver, MissingDriverError } from "./driver-import.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** Which library opens SQLite files in this process. */
export type SqliteDriverName = "better-sqlite3" | "bun:sqlite";

/** Opens SQLite files with the driver chosen for this process. */
export interface SqliteDriver {
  readonly name: SqliteDriverName;
  open(filename: string): SqliteConnection;
}

/**
 * An installed driver that cannot run on this runtime and would crash the process if loaded:
 * better-sqlite3 13 is built for Node-API 10, and Node.js before 22.14 (Node 20 among them)
 * dies with a segmentation fault when it loads such an addon, with no JavaScript error to catch.
 */
export class UnsupportedDriverError extends FirmQueueError {
  constructor(
    readonly packageName: string,
    readonly packageVersion: string,
    reason: string,
    remedy: string,
  ) {
    super(`${packageName} ${packageVersion} cannot run here: ${reason}; ${remedy}`);
  }
}

let chosen: Promise<SqliteDriver> | undefined;

/**
 * The SQLite driver of this process, chosen once, on first open: better-sqlite3 when it is
 * installed and loads, else Bun's built-in `bun:sqlite` when running on Bun. On Node without
 * better-sqlite3 this is the MissingDriverError naming it.
 */
export function sqliteDriver(): Promise<SqliteDriver> {
  chosen ??= chooseDriver();
  // A failed choice (a missing driver) is made again next time: the app may install it meanwhile.
  return chosen.catch((error: unknown) => {
    chosen = undefined;
    throw error;
  });
}

async function chooseDriver(): Promise<SqliteDriver> {
  let unavailable: unknown;
  try {
    const { default: Database } = await importDriver(
      "better-sqlite3",
      "SQLite databases",
      () => import("better-sqlite3"),
    );
    refuseUnloadableBuild();
    // better-sqlite3 loads its native addon in its first constructor: open a throwaway
    // connection so an addon this runtime cannot load (Bun and better-sqlite3 12) is found now.
    new Database(":memory:").close();
    return { name: "better-sqlite3", open: (filename) => new Database(filename) };
  } catch (error) {
    if (!(error instanceof MissingDriverError) && (error as { code?: unknown })?.code !== "ERR_DLOPEN_FAILED")
      throw error;
    unavailable = error;
  }
  const bun = await loadBunSqlite();
  if (bun === undefined) throw unavailable;
  return { name: "bun:sqlite", open: (filename) => bunSqliteConnection(new bun.Database(filename)) };
}

/** The first better-sqlite3 major built for Node-API 10 (see {@link UnsupportedDriverError}). */
const NODE_API_10_MAJOR = 13;

function refuseUnloadableBuild(): void {
  const nodeApi = Number(process.versions.napi ?? 0);
  if (nodeApi >= 10) return;
  const require = createRequire(import.meta.url);
  const { version } = require("better-sqlite3/package.json") as { version: string };
  if (Number(version.split(".")[0]) < NODE_API_10_MAJOR) return;
  throw new UnsupportedDriverError(
    "better-sqlite3",
    version,
    `it needs Node-API 10 (Node.js 22.14 or newer), and Node.js ${process.versions.node} has Node-API ${nodeApi}; loading it would crash the process`,
    "install better-sqlite3 12 (npm install better-sqlite3@12) or use a newer Node.js",
  );
}
