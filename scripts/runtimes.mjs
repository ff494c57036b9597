#!/usr/bin/env node
// Installs the runtimes the smoke suite (test/runtimes/) runs firm-queue on besides the machine's
// Node: other Node.js lines and Bun, each from its platform package in the npm registry (a
// binary shipped inside a package; nothing is downloaded from anywhere else), and the
// better-sqlite3 build they use. Everything goes into one cache directory that later runs reuse:
//
//   node scripts/runtimes.mjs [node22 node24 bun ...]    (prints what it has, installing what is missing)
//
// The directory is FIRM_QUEUE_RUNTIMES_DIR, or ~/.cache/firm-queue/runtimes. An install is
// reused for a week, then refreshed to the newest release of its line.

import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const REFRESH_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * better-sqlite3 for the other runtimes: 13.x ships Node-API builds for every platform inside
 * its package (no compiler, no download, one build for Node 22, 24 and Bun alike), where 12.x
 * compiles against each Node line's ABI. It needs Node-API 10, so never Node 20 (see
 * docs/integration.md).
 */
export const BETTER_SQLITE3_RANGE = "13";

/** @typedef {{ name: string, kind: "node" | "bun", bin: string, version: string }} Runtime */

/** The runtimes this script knows, by name: the package (range) whose `bin/` holds the binary. */
const RUNTIMES = {
  node22: { kind: "node", range: "22" },
  node24: { kind: "node", range: "24" },
  bun: { kind: "bun", range: "1" },
};

/** @returns {string[]} */
export function runtimeNames() {
  return Object.keys(RUNTIMES);
}

/** The cache directory. */
export function runtimesDir() {
  if (process.env.FIRM_QUEUE_RUNTIMES_DIR) return process.env.FIRM_QUEUE_RUNTIMES_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "firm-queue", "runtimes");
}

/** The platform package of a runtime for this machine. */
function platformPackage(kind) {
  const { platform, arch } = process;
  if (kind === "node") return `node-${platform}-${arch}`;
  const bunArch = arch === "arm64" ? "aarch64" : arch;
  // Bun's plain x64 build needs AVX2; the baseline build runs on any x86-64.
  const baseline = arch === "x64" && platform === "linux" && !readFileSync("/proc/cpuinfo", "utf8").includes(" avx2");
  return `@oven/bun-${platform}-${bunArch}${baseline ? "-baseline" : ""}`;
}

/**
 * `npm install` of one package into `dir`, unless a fresh install of the same spec is there.
 * Scripts never run: the runtimes' packages and better-sqlite3 13 ship their binaries ready.
 * @returns {Promise<string>} where the package is
 */
async function installPackage(dir, name, range) {
  const spec = `${name}@${range}`;
  const stamp = join(dir, ".installed");
  const where = join(dir, "node_modules", name);
  const fresh =
    existsSync(stamp) &&
    existsSync(where) &&
    readFileSync(stamp, "utf8") === spec &&
    Date.now() - statSync(stamp).mtimeMs < REFRESH_MS;
  if (fresh) return where;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), '{ "private": true }\n');
  await run("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--ignore-scripts", spec], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  writeFileSync(stamp, spec);
  return where;
}

/**
 * Install (or find) one runtime.
 * @param {string} name one of {@link runtimeNames}
 * @returns {Promise<Runtime>}
 */
export async function installRuntime(name) {
  const known = RUNTIMES[/** @type {keyof typeof RUNTIMES} */ (name)];
  if (!known) throw new Error(`unknown runtime ${name}; known: ${runtimeNames().join(", ")}`);
  const where = await installPackage(join(runtimesDir(), name), platformPackage(known.kind), known.range);
  const bin = join(where, "bin", known.kind);
  const { stdout } = await run(bin, ["--version"]);
  return { name, kind: /** @type {"node" | "bun"} */ (known.kind), bin, version: stdout.trim() };
}

/**
 * better-sqlite3 13 in a directory of its own: link `node_modules/better-sqlite3` from here into
 * a project run by another runtime.
 * @returns {Promise<string>} the package directory
 */
export function installBetterSqlite3() {
  return installPackage(join(runtimesDir(), "better-sqlite3"), "better-sqlite3", BETTER_SQLITE3_RANGE);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const names = process.argv.length > 2 ? process.argv.slice(2) : runtimeNames();
  console.log(`runtimes in ${runtimesDir()}`);
  for (const name of names) {
    const started = Date.now();
    const runtime = await installRuntime(name);
    console.log(`${name}: ${runtime.version} (${runtime.bin}, ${Date.now() - started} ms)`);
  }
  const started = Date.now();
  const driver = await installBetterSqlite3();
  const { version } = JSON.parse(readFileSync(join(driver, "package.json"), "utf8"));
  console.log(`better-sqlite3 ${version} (${driver}, ${Date.now() - started} ms)`);
}
