// A PostgreSQL primary with a streaming replica, for the high-availability tests: the replica is
// cloned with pg_basebackup and follows over streaming replication, synchronously (the primary's
// commit waits for the replica to flush it: synchronous_standby_names) or asynchronously. The test
// SIGKILLs the primary's whole process group (a machine that died) and promotes the replica.
// Servers run nice'd (the machine is shared) as the postgres user when root.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { appendFileSync, chownSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { postgresBinDir } from "../../scripts/servers/postgres.mjs";
import { LagProxy } from "./lag-proxy.js";

/** Synchronous: no acknowledged commit is lost when the primary dies. Asynchronous: some may be. */
export type ReplicationMode = "sync" | "async";

/** The name the replica connects with, which synchronous_standby_names waits for. */
const REPLICA_NAME = "replica1";

interface Account {
  readonly uid: number;
  readonly gid: number;
}

/** One server of the pair. */
export interface PairServer {
  readonly port: number;
  readonly dataDir: string;
  /** `127.0.0.1:port`. */
  readonly address: string;
  process: ChildProcess | null;
}

/** A running primary + replica. */
export class PostgresPair {
  /** The relay the replica streams through when it is made to trail. */
  private lag: LagProxy | null = null;

  private constructor(
    readonly mode: ReplicationMode,
    private readonly dir: string,
    private readonly bin: string,
    private readonly account: Account | null,
    readonly primary: PairServer,
    readonly replica: PairServer,
  ) {}

  /** Whether this machine can run the pair (PostgreSQL's binaries and pg_basebackup installed). */
  static available(): boolean {
    const bin = postgresBinDir();
    if (!bin) return false;
    try {
      execFileSync(join(bin, "pg_basebackup"), ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  }

  /** initdb a primary, start it, clone the replica with pg_basebackup, start it, wait until it streams. */
  static async start(mode: ReplicationMode, replicationLagMs = 0): Promise<PostgresPair> {
    const bin = postgresBinDir();
    if (!bin) throw new Error("PostgreSQL binaries not found (Debian: apt-get install postgresql-15)");
    const account = process.getuid?.() === 0 ? postgresAccount() : null;
    const dir = mkdtempSync(join(tmpdir(), "firm-queue-pg-pair-"));
    if (account) chownSync(dir, account.uid, account.gid);
    const [primaryPort, replicaPort] = [await freePort(), await freePort()];
    const server = (name: string, port: number): PairServer => ({
      port,
      dataDir: join(dir, name),
      address: `127.0.0.1:${port}`,
      process: null,
    });
    const pair = new PostgresPair(
      mode,
      dir,
      bin,
      account,
      server("primary", primaryPort),
      server("replica", replicaPort),
    );
    try {
      await pair.tool("initdb", [
        "-D",
        pair.primary.dataDir,
        "-U",
        "postgres",
        "--auth=trust",
        "--locale=C",
        "--no-sync",
      ]);
      appendFileSync(join(pair.primary.dataDir, "pg_hba.conf"), "host replication all 127.0.0.1/32 trust\n");
      await pair.launch(pair.primary, ["-c", `synchronous_standby_names=${mode === "sync" ? REPLICA_NAME : ""}`]);
      await pair.tool("pg_basebackup", [
        "-h",
        "127.0.0.1",
        "-p",
        String(primaryPort),
        "-U",
        "postgres",
        "-D",
        pair.replica.dataDir,
        "-X",
        "stream",
        "-c",
        "fast",
        "-R",
        "--no-sync",
      ]);
      // A trailing replica streams through a relay that holds the WAL back (lag-proxy.ts).
      if (replicationLagMs > 0)
        pair.lag = await LagProxy.start({ host: "127.0.0.1", port: primaryPort }, replicationLagMs);
      // After -R's line, so it wins: the name synchronous_standby_names waits for.
      appendFileSync(
        join(pair.replica.dataDir, "postgresql.auto.conf"),
        `primary_conninfo = 'host=127.0.0.1 port=${pair.lag?.port ?? primaryPort} user=postgres application_name=${REPLICA_NAME}'\n`,
      );
      await pair.launch(pair.replica, []);
      await pair.waitUntilStreaming();
      return pair;
    } catch (error) {
      await pair.stop();
      throw error;
    }
  }

  /** Admin URL of one server. */
  adminUrl(server: PairServer, database = "postgres"): string {
    return `postgres://postgres@${server.address}/${database}`;
  }

  /** The URL firm-queue's processes get: both servers, the writable one wanted. */
  failoverUrl(database: string): string {
    return `postgres://postgres@${this.primary.address},${this.replica.address}/${database}?target_session_attrs=read-write`;
  }

  /** SIGKILL the primary's postmaster and every backend (its process group): nothing is flushed or said goodbye. */
  killPrimary(): void {
    this.kill(this.primary);
    // The primary's sockets die with it; what the relay still held for the replica is lost.
  }

  /** SIGKILL one server's postmaster and every backend. */
  kill(server: PairServer): void {
    const pid = server.process?.pid;
    if (pid === undefined) throw new Error(`${server.address} is not running`);
    process.kill(-pid, "SIGKILL");
    server.process = null;
  }

  /** Promote the replica and wait until it takes writes. */
  async promoteReplica(): Promise<void> {
    await this.sql(this.replica, "SELECT pg_promote(true, 60)");
  }

  /** Wait until the replica has replayed everything the primary has written so far. */
  async waitUntilReplayed(): Promise<void> {
    const [current] = await this.sql<{ lsn: string }>(this.primary, "SELECT pg_current_wal_lsn()::text AS lsn");
    const lsn = current!.lsn;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [row] = await this.sql<{ caught_up: boolean }>(
        this.replica,
        `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS caught_up`,
      );
      if (row?.caught_up) return;
      if (Date.now() > deadline) throw new Error("the replica did not catch up within 30 s");
      await sleep(100);
    }
  }

  /** Run one statement on a server, on a connection of its own. */
  async sql<T extends object = Record<string, unknown>>(server: PairServer, text: string): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.adminUrl(server), connectionTimeoutMillis: 5000 });
    client.on("error", () => undefined);
    await client.connect();
    try {
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    await this.lag?.close();
    for (const server of [this.primary, this.replica]) {
      const pid = server.process?.pid;
      if (pid === undefined) continue;
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // gone already
      }
      server.process = null;
    }
    // Backends die with their group; give the kernel a moment before removing their files.
    await sleep(200);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitUntilStreaming(): Promise<void> {
    const wanted = this.mode === "sync" ? "sync" : "async";
    const deadline = Date.now() + 60_000;
    for (;;) {
      const rows = await this.sql<{ sync_state: string }>(
        this.primary,
        `SELECT sync_state FROM pg_stat_replication WHERE application_name = '${REPLICA_NAME}' AND state = 'streaming'`,
      ).catch(() => []);
      if (rows[0]?.sync_state === wanted) return;
      if (Date.now() > deadline) throw new Error(`the replica is not streaming (${wanted}) after 60 s`);
      await sleep(200);
    }
  }

  private async launch(server: PairServer, settings: string[]): Promise<void> {
    const log = openSync(join(this.dir, `${server === this.primary ? "primary" : "replica"}.log`), "a");
    if (this.account)
      chownSync(
        join(this.dir, `${server === this.primary ? "primary" : "replica"}.log`),
        this.account.uid,
        this.account.gid,
      );
    // nice: eight helpers share two cores. detached: a process group of its own, killed as a whole.
    const child = spawn(
      "nice",
      [
        "-n",
        "10",
        join(this.bin, "postgres"),
        "-D",
        server.dataDir,
        "-p",
        String(server.port),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
        // Durability towards the replica is what is tested; the disk of a throwaway cluster is not.
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=on",
        "-c",
        "max_connections=200",
        "-c",
        "wal_level=replica",
        "-c",
        "max_wal_senders=5",
        "-c",
        "jit=off",
        ...settings,
      ],
      { detached: true, stdio: ["ignore", log, log], ...(this.account ?? {}) },
    );
    child.unref();
    server.process = child;
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await this.sql(server, "SELECT 1");
        return;
      } catch (error) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(
            `PostgreSQL on ${server.address} did not start: ${(error as Error).message} (log in ${this.dir})`,
          );
        await sleep(200);
      }
    }
  }

  private tool(name: string, args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn("nice", ["-n", "10", join(this.bin, name), ...args], {
        stdio: ["ignore", "pipe", "pipe"],
        ...(this.account ?? {}),
      });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${name} failed (${code}): ${output}`))));
    });
  }
}

function postgresAccount(): Account {
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return { uid, gid };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ port: 0, host: "127.0.0.1" }, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
