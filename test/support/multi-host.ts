// The multi-host harness: a throwaway database server listening on loopback and on a test
// bridge, and "hosts" (network namespaces, see netns.ts) each running the built
// `firm-queue start`. stop() removes every process, server, namespace and link it made, and runs
// on failure too (use it in afterAll / finally).

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mysql from "mysql2/promise";
import pg from "pg";
import { FirmQueue, silentLogger } from "../../src/index.js";
import type { Db } from "../../src/database/dialect.js";
import { startMariadb } from "../../scripts/servers/mariadb.mjs";
import { startPostgres } from "../../scripts/servers/postgres.mjs";
import type { RunningServer } from "../../scripts/servers/types.js";
import { createNetwork, netnsUnavailableReason, type NetnsHost, type NetnsNetwork } from "../../scripts/netns.mjs";
import { CLI, ROOT } from "./processes.js";

export type ServerDialect = "postgres" | "mysql";

/** A `firm-queue start` running inside one namespace. */
export interface HostProcess {
  readonly name: string;
  readonly network: NetnsHost;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  readonly exited: Promise<number | string>;
  /** Everything it printed so far (its log is on stderr). */
  output(): string;
  /** Resolve once its output matches `pattern` (checked as output arrives), or reject after `timeout` ms. */
  waitForOutput(pattern: RegExp, timeout: number): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export interface Cluster {
  readonly dialect: ServerDialect;
  readonly network: NetnsNetwork;
  /** The database as the hosts reach it (through the bridge). */
  readonly hostUrl: string;
  /** The same database through loopback, for the test's own queries. */
  readonly localUrl: string;
  /** Job log file the fixture appends to (one JSON line per handler start and end). */
  readonly jobLog: string;
  /** A FirmQueue on loopback (enqueue, assertions), silent. */
  readonly firm: FirmQueue;
  db(): Promise<Db>;
  /** Start `firm-queue start` on host `index` (0-based) with extra CLI arguments and environment. */
  startHost(index: number, args?: readonly string[], env?: Record<string, string>): HostProcess;
  jobEvents(): JobEvent[];
  stop(): Promise<void>;
}

export interface JobEvent {
  readonly event: "start" | "end";
  readonly jobId: number;
  readonly attempt: number;
  readonly host: string;
  readonly pid: number;
  readonly at: number;
}

export const FIXTURE = join(ROOT, "test/fixtures/multi-host-jobs.ts");

/** Why multi-host tests cannot run here, or null. In CI they must run: the caller fails instead of skipping. */
export function multiHostUnavailableReason(): string | null {
  return netnsUnavailableReason();
}

/** A bridge, `hostCount` namespaces, and a fresh migrated database reachable from them. */
export async function startCluster(dialect: ServerDialect, hostCount: number): Promise<Cluster> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" (npm test does it for you)`);
  const cleanups: Array<() => Promise<void> | void> = [];
  const hosts: HostProcess[] = [];
  let jobLogFile = "";
  const stop = async () => {
    // Debugging aid: keep what each host printed.
    const keep = process.env.FIRM_QUEUE_MULTI_HOST_DEBUG;
    if (keep && existsSync(jobLogFile)) writeFileSync(join(keep, `${dialect}-jobs.log`), readFileSync(jobLogFile));
    if (keep) {
      for (const [index, host] of hosts.entries())
        writeFileSync(join(keep, `${dialect}-${index}-${host.name}.log`), host.output());
    }
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        console.warn("multi-host cleanup step failed:", error);
      }
    }
  };
  try {
    const network = createNetwork(hostCount);
    cleanups.push(() => network.destroy());
    const options = {
      extraListenAddresses: [network.bridgeAddress],
      clientNetworks: [network.subnet],
      // What docs/scaling.md asks of a PostgreSQL server that serves many hosts: a transaction
      // left open by a cut-off host must not hold its row locks until the link comes back.
      // (firm-queue sets MariaDB's idle_transaction_timeout on its own connections.)
      settings: { idle_in_transaction_session_timeout: "5s" },
    };
    const server: RunningServer = dialect === "postgres" ? await startPostgres(options) : await startMariadb(options);
    cleanups.push(() => server.stop());
    await createDatabase(dialect, server.url, DATABASE);
    const localUrl = new URL(server.url);
    localUrl.pathname = `/${DATABASE}`;
    const hostUrl = new URL(localUrl.href);
    hostUrl.hostname = network.bridgeAddress;
    const dir = await mkdtemp(join(tmpdir(), "firm-queue-multihost-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const jobLog = join(dir, "jobs.log");
    jobLogFile = jobLog;
    const firm = new FirmQueue({ databaseUrl: localUrl.href, logger: silentLogger });
    cleanups.push(() => firm.close());
    // What the enqueuer needs of test/fixtures/multi-host-jobs.ts' definitions: the concurrency
    // key and limit are applied when a job is enqueued (the handlers here never run).
    firm.defineJob("work", () => undefined);
    firm.defineJob("limited", () => undefined, { concurrency: { key: "shared", to: 2 } });
    firm.defineJob("noop", () => undefined);
    await firm.migrate();
    cleanups.push(() => Promise.all(hosts.map((host) => host.stop("SIGKILL"))).then(() => undefined));
    return {
      dialect,
      network,
      hostUrl: hostUrl.href,
      localUrl: localUrl.href,
      jobLog,
      firm,
      db: async () => (await firm.database()).db,
      startHost(index, args = [], env = {}) {
        const host = spawnHost(`host${index + 1}`, network.hosts[index]!, hostUrl.href, args, {
          MULTI_HOST_LOG: jobLog,
          ...env,
        });
        hosts.push(host);
        return host;
      },
      jobEvents: () => readEvents(jobLog),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function spawnHost(
  name: string,
  network: NetnsHost,
  databaseUrl: string,
  args: readonly string[],
  env: Record<string, string>,
): HostProcess {
  const [command, commandArgs] = network.command(process.execPath, [
    CLI,
    "start",
    "--require",
    FIXTURE,
    "--database-url",
    databaseUrl,
    ...args,
  ]);
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    env: { ...process.env, FIRM_QUEUE_LOG_LEVEL: "info", MULTI_HOST_NAME: name, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  let killedWith: NodeJS.Signals | undefined;
  const exited = new Promise<number | string>((resolve) =>
    child.on("close", (code, signal) => {
      // In the kept output: how it ended, and whether the test ended it.
      append(
        Buffer.from(
          `${new Date().toISOString()} [multi-host harness] ${name} exited: code=${code} signal=${signal}` +
            `${killedWith ? ` (the test sent ${killedWith})` : ""}\n`,
        ),
      );
      resolve(code ?? signal ?? "unknown");
    }),
  );
  let gone = false;
  void exited.then(() => (gone = true));
  return {
    name,
    network,
    child,
    exited,
    output: () => output,
    waitForOutput(pattern, timeout) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (!match) return;
          finish();
          resolve(match[0]);
        };
        const timer = setTimeout(() => {
          finish();
          reject(
            new Error(
              `${name} printed nothing matching ${pattern} within ${timeout} ms. Its output:\n${output.slice(-4000)}`,
            ),
          );
        }, timeout);
        const finish = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    async stop(signal = "SIGTERM") {
      if (!gone) {
        killedWith ??= signal;
        child.kill(signal);
      }
      return exited;
    },
  };
}

const DATABASE = "firm_multi_host";

async function createDatabase(dialect: ServerDialect, adminUrl: string, name: string): Promise<void> {
  if (dialect === "postgres") {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`).finally(() => client.end());
  } else {
    const connection = await mysql.createConnection(adminUrl);
    await connection.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`).finally(() => connection.end());
  }
}

function readEvents(file: string): JobEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as JobEvent);
}
