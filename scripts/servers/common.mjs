// Plumbing shared by the throwaway PostgreSQL and MariaDB servers used by the
// test suite: finding binaries, picking ports, running as the service account,
// waiting for readiness, and making sure nothing outlives the process that
// started it. Only Node built-ins here, so `node` can run it without npm deps.

import { execFileSync, spawn } from "node:child_process";
import {
  accessSync,
  chownSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";

/** @typedef {import("./types.js").ServerOptions} ServerOptions */
/** @typedef {import("./types.js").RunningServer} RunningServer */
/** @typedef {{ uid: number, gid: number }} Account */
/** @typedef {{ code: number | null, signal: NodeJS.Signals | null, error?: Error }} ExitInfo */

const DEFAULT_TIMEOUT_MS = 30_000;
// A port picked by freePort() can be taken by someone else before the server
// binds it (other test runs share this machine), so a bind failure gets a retry.
const START_ATTEMPTS = 3;

/** @param {string} file */
function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Directories on PATH, in order. */
export function pathDirs() {
  return (process.env.PATH ?? "").split(delimiter).filter(Boolean);
}

/**
 * First `dir/name` that is executable, or null.
 * @param {string} name
 * @param {string[]} dirs
 */
export function findExecutable(name, dirs) {
  for (const dir of dirs) {
    const file = join(dir, name);
    if (isExecutable(file)) return file;
  }
  return null;
}

/**
 * Like findExecutable, but follows symlinks, so a link on PATH (say
 * /usr/local/bin/initdb) leads to the real install directory and its siblings.
 * @param {string} name
 * @param {string[]} dirs
 */
export function realDirOf(name, dirs) {
  const file = findExecutable(name, dirs);
  return file ? dirname(realpathSync(file)) : null;
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Both servers refuse to run as root, so as root we run them as their usual
 * service account; as anyone else we run them as ourselves.
 * @param {string} user
 * @returns {Account | null} null when no switch is needed
 */
function serviceAccount(user) {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return null;
  try {
    const id = (/** @type {string} */ flag) =>
      Number(execFileSync("id", [flag, user], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    throw new Error(
      `Running as root, but there is no '${user}' system user to run the server as (the server refuses to run as root).`,
    );
  }
}

/** Whether serviceAccount(user) would succeed. @param {string} user */
export function canRunAs(user) {
  try {
    serviceAccount(user);
    return true;
  } catch {
    return false;
  }
}

/** A port that was free a moment ago on 127.0.0.1. @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen({ port: 0, host: "127.0.0.1", exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Last lines of a log file, for error messages. @param {string} file @param {number} [lines] */
function logTail(file, lines = 30) {
  try {
    const text = readFileSync(file, "utf8").trimEnd();
    return text ? text.split("\n").slice(-lines).join("\n") : "(empty)";
  } catch {
    return "(no log)";
  }
}

/**
 * Runs a setup tool (initdb, mariadb-install-db) to completion.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd: string, account: Account | null, logFile: string, timeoutMs: number }} options
 */
async function runTool(command, args, { cwd, account, logFile, timeoutMs }) {
  const log = openSync(logFile, "a");
  try {
    const started = Date.now();
    const child = spawn(command, args, {
      cwd,
      env: serverEnv(),
      stdio: ["ignore", log, log],
      timeout: timeoutMs,
      ...account,
    });
    const { code, signal, error } = await exitOf(child);
    if (error || code !== 0) {
      const timedOut = signal && Date.now() - started >= timeoutMs;
      const why = error
        ? error.message
        : timedOut
          ? `timed out after ${timeoutMs / 1000} s`
          : signal
            ? `killed by ${signal}`
            : `exit code ${code}`;
      // Setup tools end with long boilerplate; the real error is further up.
      throw new Error(`${command} failed (${why}). Last lines of its output:\n${logTail(logFile, 60)}`);
    }
  } finally {
    closeSync(log);
  }
}

/** Servers get our environment, minus locale surprises. */
function serverEnv() {
  return { ...process.env, LC_ALL: "C", LANG: "C" };
}

/**
 * Resolves once the child is gone; never rejects.
 * @param {import("node:child_process").ChildProcess} child
 * @returns {Promise<ExitInfo>}
 */
function exitOf(child) {
  return new Promise((resolve) => {
    child.once("error", (error) => resolve({ code: null, signal: null, error }));
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
}

// Runs beside each server and cleans up if the starting process dies without
// calling stop(): on SIGKILL, on a crash, or when a runner (vitest does) calls
// process.exit() on Ctrl-C without running its teardown. It polls, so it also
// works where the server is no child of ours any more.
// Arguments: $1 pid to watch, $2 server pid, $3 shutdown signal name without
// "SIG" (what POSIX sh's kill -s takes), $4 dir to remove.
const WATCHDOG = `
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  # A dead process nobody has reaped yet (a zombie) still answers kill -0.
  if [ -r "/proc/$1/stat" ]; then ! grep -q ') Z' "/proc/$1/stat"; fi
}
while alive "$1"; do sleep 1; done
kill -s "$3" "$2" 2>/dev/null
i=0
while alive "$2" && [ "$i" -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
kill -s KILL "$2" 2>/dev/null
rm -rf "$4"
`;

/**
 * Starts a database server and waits until it answers.
 * @param {object} spec
 * @param {string} spec.label         human name, for messages ("PostgreSQL")
 * @param {string} spec.prefix        temp dir name prefix
 * @param {string} spec.user          service account to use when root
 * @param {(dir: string, tool: (command: string, args: string[]) => Promise<void>) => Promise<void>} spec.init  creates the data directory
 * @param {string} spec.command       server binary
 * @param {(port: number, dir: string) => string[]} spec.args
 * @param {(port: number) => Promise<boolean>} spec.isReady
 * @param {NodeJS.Signals} spec.shutdownSignal  the signal for a quick clean shutdown
 * @param {(port: number) => string} spec.url
 * @param {ServerOptions} [options]
 * @returns {Promise<RunningServer>}
 */
export async function launch(spec, options = {}) {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const account = serviceAccount(spec.user);
  const dir = mkdtempSync(join(options.parentDir ?? tmpdir(), spec.prefix));
  const logFile = join(dir, "server.log");
  const removeDir = () => rm(dir, { recursive: true, force: true, maxRetries: 3 });
  try {
    // The service account must own the directory; mkdtemp made it 0700 for us.
    if (account) chownSync(dir, account.uid, account.gid);
    await spec.init(dir, (command, args) => runTool(command, args, { cwd: dir, account, logFile, timeoutMs }));

    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        let server = await startOnce(spec, { port, dir, account, logFile, timeoutMs });
        /** @type {Promise<void> | undefined} */
        let stopping;
        return {
          url: spec.url(port),
          logFile,
          exited: server.exited.then(() => undefined),
          // Same port, same data: clients see the server go away and come back, as in a failover
          // or an upgrade. Only tests that start a server of their own call this.
          restart: async () => {
            if (stopping) throw new Error(`${spec.label} was stopped; it cannot be restarted`);
            await server.stop();
            server = await startOnce(spec, { port, dir, account, logFile, timeoutMs });
          },
          stop: () =>
            (stopping ??= (async () => {
              await server.stop();
              await removeDir();
            })()),
        };
      } catch (error) {
        const portTaken = /address already in use/i.test(logTail(logFile, 10));
        if (!portTaken || attempt >= START_ATTEMPTS) throw error;
      }
    }
  } catch (error) {
    await removeDir();
    throw error;
  }
}

/**
 * @param {Parameters<typeof launch>[0]} spec
 * @param {{ port: number, dir: string, account: Account | null, logFile: string, timeoutMs: number }} context
 */
async function startOnce(spec, { port, dir, account, logFile, timeoutMs }) {
  const started = Date.now();
  const log = openSync(logFile, "a");
  // detached: its own process group, so a Ctrl-C in the terminal reaches us
  // (and our cleanup) rather than killing the server behind our back.
  const child = spawn(spec.command, spec.args(port, dir), {
    cwd: dir,
    env: serverEnv(),
    stdio: ["ignore", log, log],
    detached: true,
    ...account,
  });
  closeSync(log);
  // Never let a running server keep the starting process alive.
  child.unref();
  const exited = exitOf(child);

  const watchdog =
    child.pid === undefined
      ? null
      : spawn(
          "/bin/sh",
          [
            "-c",
            WATCHDOG,
            "firm-queue-watchdog",
            String(process.pid),
            String(child.pid),
            spec.shutdownSignal.replace(/^SIG/, ""),
            dir,
          ],
          { detached: true, stdio: "ignore" },
        );
  watchdog?.unref();

  const stop = once(async () => {
    watchdog?.kill("SIGKILL");
    await stopProcess(child, exited, spec.shutdownSignal);
  });

  let gone = /** @type {ExitInfo | null} */ (null);
  void exited.then((info) => (gone = info));
  try {
    while (!(await spec.isReady(port))) {
      if (gone) {
        const why = gone.error
          ? gone.error.message
          : `exit code ${gone.code}${gone.signal ? `, signal ${gone.signal}` : ""}`;
        throw new Error(`${spec.label} exited during startup (${why}). Last lines of its log:\n${logTail(logFile)}`);
      }
      if (Date.now() - started > timeoutMs) {
        throw new Error(
          `${spec.label} did not accept connections on 127.0.0.1:${port} within ${timeoutMs / 1000} s. Last lines of its log:\n${logTail(logFile)}`,
        );
      }
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop, exited };
}

/**
 * Asks politely, then insists: data is thrown away anyway, we only want the
 * processes gone before the directory is removed.
 * @param {import("node:child_process").ChildProcess} child
 * @param {Promise<ExitInfo>} exited
 * @param {NodeJS.Signals} signal
 */
async function stopProcess(child, exited, signal) {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  // The child is unref'd; without this, a caller with nothing else pending
  // (the CLI after Ctrl-C) could exit before the server is gone.
  child.ref();
  child.kill(signal);
  if (!(await settlesWithin(exited, 10_000))) {
    child.kill("SIGKILL");
    await settlesWithin(exited, 5_000);
  }
}

/**
 * Whether the promise settled within ms. Clears its timer, so it never keeps
 * the process alive after the answer is known.
 * @param {Promise<unknown>} promise
 * @param {number} ms
 * @returns {Promise<boolean>}
 */
function settlesWithin(promise, ms) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(resolve, ms, false)));
  return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

/**
 * Makes an async function idempotent: later calls share the first call's promise.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {() => Promise<T>}
 */
function once(fn) {
  /** @type {Promise<T> | undefined} */
  let promise;
  return () => (promise ??= fn());
}

/**
 * Readiness by a fresh TCP connection to 127.0.0.1:`port`: resolves with `ready(first data)`, or
 * true on connect when no `ready` is given; false on an error or a second's silence.
 * @param {number} port
 * @param {{ greeting?: string, ready?: (data: Buffer) => boolean }} [probe] greeting: sent on connect
 * @returns {Promise<boolean>}
 */
export function probeTcp(port, probe = {}) {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    const done = (/** @type {boolean} */ ready) => {
      socket.destroy();
      resolve(ready);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => {
      if (probe.greeting !== undefined) socket.write(probe.greeting);
      if (!probe.ready) done(true);
    });
    if (probe.ready) socket.once("data", (data) => done(probe.ready(data)));
  });
}
