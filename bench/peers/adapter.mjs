// The interface every queue system implements for bench/peers.mjs, and helpers adapters share.
// One system = one file in this folder exporting a `PeerAdapter` (or a function making variants
// of one), plus one line per variant in ./index.mjs.
//
// Each system is opened twice: in the benchmark's process, which creates its schema and queues
// and enqueues every job, and in a worker process of its own (./worker-process.mjs, `attach`),
// which runs the workers. So the worker's memory is the worker's alone, and a job for the
// latency samples is always enqueued from another process than the one that runs it.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * @typedef {"postgres" | "mysql" | "sqlite" | "redis"} ServerKind  the server a system runs on
 *
 * @typedef {object} OpenOptions
 * @property {string} url                   a fresh, empty database (or Redis) for this system alone
 * @property {number} concurrency           jobs one worker runs at once
 * @property {number} pollingInterval       requested idle polling interval in ms (systems with a minimum use theirs)
 * @property {readonly string[]} queues     every queue (or task) name the run will use
 * @property {boolean} [attach]             the schema and queues exist (another process opened the
 *                                          system first): connect only, create nothing
 * @property {number} [retained]            systems with `retains`: finished jobs to put in the
 *                                          database before the run (not with `attach`)
 *
 * @typedef {object} RunningWorker
 * @property {() => Promise<void>} stop     stop claiming and wait for running handlers
 *
 * @typedef {object} PeerSystem
 * @property {string} version                                   library version, for the report
 * @property {string} settings                                  what was set, in words, for the report
 * @property {number} pollingIntervalMs                         idle polling interval actually in force
 * @property {(queue: string, payload: object) => Promise<void>} enqueue               one job, one call
 * @property {(queue: string, payloads: object[]) => Promise<void>} enqueueBatch       the library's own bulk API
 * @property {(queue: string, handler: (payload: any) => void) => Promise<RunningWorker>} startWorker
 *   one worker in this process with `concurrency` slots, running `handler` for each job of `queue`
 *   (called in the worker process only)
 * @property {(queue: string) => Promise<void>} clear           drop jobs of `queue` that have not started
 * @property {() => Promise<void>} close                        release connections (the database is dropped by the caller)
 *
 * @typedef {object} PeerAdapter
 * @property {string} id            command-line name, e.g. "pg-boss"
 * @property {string} label         table name, e.g. "pg-boss (PostgreSQL)"
 * @property {ServerKind} server
 * @property {string} packageName   npm package to load; its absence fails the run with a clear message
 * @property {(options: OpenOptions) => Promise<PeerSystem>} open
 * @property {boolean} [retains]    whether `retained` is supported (--retained)
 * @property {boolean} [onlyWhenNamed] left out of the default list: runs only when --systems names it
 */

const require = createRequire(import.meta.url);

/** Thrown when a peer library is not installed: the benchmark cannot compare without it. */
export class MissingPeerError extends Error {
  /** @param {string} packageName @param {unknown} cause */
  constructor(packageName, cause) {
    super(
      `The benchmark needs the npm package "${packageName}" (a devDependency of firm-queue) and it cannot be loaded. Run \`npm install\` in the repository, or leave this system out with --systems.`,
      { cause },
    );
    this.name = "MissingPeerError";
  }
}

/**
 * Import a peer library by name, failing with a MissingPeerError that says what to do.
 * @param {string} packageName
 */
export async function importPeer(packageName) {
  try {
    return await import(packageName);
  } catch (error) {
    const code = /** @type {{ code?: string }} */ (error)?.code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") throw new MissingPeerError(packageName, error);
    throw error;
  }
}

/**
 * The installed version of a package, read from its package.json (found from its entry point,
 * since some packages do not export ./package.json).
 * @param {string} packageName
 */
export function installedVersion(packageName) {
  let dir = dirname(require.resolve(packageName));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (manifest.name === packageName) return String(manifest.version);
    } catch {
      // no package.json here: keep climbing
    }
    const parent = dirname(dir);
    if (parent === dir) return "unknown";
    dir = parent;
  }
}
