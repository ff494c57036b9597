// A three-node MariaDB Galera cluster for the high-availability tests: each node a mariadbd of its
// own on loopback ports (client, group communication, IST and SST), bootstrapped from node 1
// (--wsrep-new-cluster), the others joining by state transfer (rsync). A node can be SIGKILLed
// (its whole process group) and started again, when it rejoins by IST or SST. Servers run nice'd
// as the mysql user when root.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import mysql from "mysql2/promise";
import { mariadbBinaries } from "../../scripts/servers/mariadb.mjs";

/** Debian's galera-4 puts the provider here. */
export const GALERA_PROVIDER = "/usr/lib/galera/libgalera_smm.so";

interface Account {
  readonly uid: number;
  readonly gid: number;
}

/** One node's ports and files. */
export interface GaleraNode {
  readonly index: number;
  readonly port: number;
  readonly galeraPort: number;
  readonly istPort: number;
  readonly sstPort: number;
  readonly dir: string;
  process: ChildProcess | null;
}

export class GaleraCluster {
  private constructor(
    private readonly dir: string,
    private readonly server: string,
    private readonly account: Account | null,
    readonly nodes: readonly GaleraNode[],
  ) {}

  /** Why the cluster cannot run here, or null when it can. */
  static unavailableReason(): string | null {
    if (!mariadbBinaries()) return "MariaDB is not installed (mariadb-server)";
    if (!existsSync(GALERA_PROVIDER)) return `the Galera provider ${GALERA_PROVIDER} is missing (galera-4)`;
    try {
      execFileSync("rsync", ["--version"], { stdio: "ignore" });
    } catch {
      return "rsync (Galera's state transfer) is missing";
    }
    return null;
  }

  /** Install three data dirs, bootstrap node 1, join nodes 2 and 3, wait until all three are synced. */
  static async start(size = 3): Promise<GaleraCluster> {
    const binaries = mariadbBinaries();
    if (!binaries) throw new Error("MariaDB is not installed");
    const account = process.getuid?.() === 0 ? mysqlAccount() : null;
    const dir = mkdtempSync(join(tmpdir(), "firm-queue-galera-"));
    if (account) chownSync(dir, account.uid, account.gid);
    const nodes: GaleraNode[] = [];
    for (let index = 1; index <= size; index++) {
      const nodeDir = join(dir, `node${index}`);
      mkdirSync(nodeDir);
      if (account) chownSync(nodeDir, account.uid, account.gid);
      nodes.push({
        index,
        port: await freePort(),
        galeraPort: await freePort(),
        istPort: await freePort(),
        sstPort: await freePort(),
        dir: nodeDir,
        process: null,
      });
    }
    const cluster = new GaleraCluster(dir, binaries.server, account, nodes);
    try {
      writeFileSync(
        join(dir, "root-over-tcp.sql"),
        "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n",
      );
      for (const node of nodes) await cluster.install(binaries.installDb, node);
      await cluster.startNode(nodes[0]!, true);
      for (const node of nodes.slice(1)) await cluster.startNode(node, false);
      await cluster.waitUntilSynced(nodes, size);
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** Admin URL of a node. */
  url(node: GaleraNode, database = ""): string {
    return `mysql://root@127.0.0.1:${node.port}/${database}`;
  }

  /** SIGKILL a node's mariadbd (its process group). */
  kill(node: GaleraNode): void {
    const pid = node.process?.pid;
    if (pid === undefined) throw new Error(`node ${node.index} is not running`);
    process.kill(-pid, "SIGKILL");
    node.process = null;
  }

  /** Start a killed node again; it rejoins and catches up (IST, or SST when it fell too far behind). */
  async rejoin(node: GaleraNode): Promise<void> {
    // A node killed mid-transaction left its grastate "safe_to_bootstrap: 0"; joining is what it does.
    await this.startNode(node, false);
    await this.waitUntilSynced([node], this.nodes.length);
  }

  /** One statement on a node, on a connection of its own. */
  async sql<T = Record<string, unknown>>(node: GaleraNode, text: string): Promise<T[]> {
    const connection = await mysql.createConnection({ uri: this.url(node), connectTimeout: 5000 });
    try {
      const [rows] = await connection.query(text);
      return rows as T[];
    } finally {
      await connection.end().catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) {
      const pid = node.process?.pid;
      if (pid === undefined) continue;
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // gone already
      }
      node.process = null;
    }
    await sleep(300);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Wait until every node of `nodes` is Synced in a primary component of `size` nodes. */
  async waitUntilSynced(nodes: readonly GaleraNode[], size: number): Promise<void> {
    const deadline = Date.now() + 120_000;
    for (const node of nodes) {
      for (;;) {
        const status = await this.sql<{ Variable_name: string; Value: string }>(
          node,
          "SHOW STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_size', 'wsrep_ready')",
        ).catch(() => []);
        const value = (name: string) => status.find((row) => row.Variable_name === name)?.Value;
        if (
          value("wsrep_local_state_comment") === "Synced" &&
          value("wsrep_ready") === "ON" &&
          Number(value("wsrep_cluster_size")) === size
        )
          break;
        if (Date.now() > deadline)
          throw new Error(`Galera node ${node.index} not synced after 120 s (logs in ${this.dir})`);
        await sleep(250);
      }
    }
  }

  private async install(installDb: string, node: GaleraNode): Promise<void> {
    await this.run(installDb, [
      "--no-defaults",
      `--datadir=${join(node.dir, "data")}`,
      `--tmpdir=${node.dir}`,
      "--auth-root-authentication-method=normal",
      "--skip-test-db",
      "--skip-name-resolve",
    ]);
  }

  private async startNode(node: GaleraNode, bootstrap: boolean): Promise<void> {
    const addresses = this.nodes.map((other) => `127.0.0.1:${other.galeraPort}`).join(",");
    const logFile = join(node.dir, "server.log");
    const log = openSync(logFile, "a");
    if (this.account) chownSync(logFile, this.account.uid, this.account.gid);
    const args = [
      "-n",
      "10",
      this.server,
      "--no-defaults",
      `--datadir=${join(node.dir, "data")}`,
      `--tmpdir=${node.dir}`,
      `--socket=${join(node.dir, "mariadb.sock")}`,
      `--pid-file=${join(node.dir, "mariadb.pid")}`,
      `--port=${node.port}`,
      "--bind-address=127.0.0.1",
      "--skip-name-resolve",
      "--max-connections=300",
      "--character-set-server=utf8mb4",
      `--init-file=${join(this.dir, "root-over-tcp.sql")}`,
      // Galera's requirements: row-based replication, InnoDB, interleaved auto-increment locks.
      "--binlog-format=ROW",
      "--default-storage-engine=InnoDB",
      "--innodb-autoinc-lock-mode=2",
      "--innodb-flush-log-at-trx-commit=2",
      "--wsrep-on=ON",
      `--wsrep-provider=${GALERA_PROVIDER}`,
      "--wsrep-cluster-name=firm-queue-test",
      `--wsrep-cluster-address=gcomm://${bootstrap ? "" : addresses}`,
      `--wsrep-node-name=node${node.index}`,
      `--wsrep-node-address=127.0.0.1:${node.galeraPort}`,
      `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${node.galeraPort};ist.recv_addr=127.0.0.1:${node.istPort};gcache.size=256M`,
      `--wsrep-sst-receive-address=127.0.0.1:${node.sstPort}`,
      "--wsrep-sst-method=rsync",
      ...(bootstrap ? ["--wsrep-new-cluster"] : []),
    ];
    const child = spawn("nice", args, { detached: true, stdio: ["ignore", log, log], ...(this.account ?? {}) });
    child.unref();
    node.process = child;
    const deadline = Date.now() + 120_000;
    for (;;) {
      try {
        await this.sql(node, "SELECT 1");
        return;
      } catch (error) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`Galera node ${node.index} did not start: ${(error as Error).message} (log ${logFile})`);
        await sleep(250);
      }
    }
  }

  private run(command: string, args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn("nice", ["-n", "10", command, ...args], {
        stdio: ["ignore", "pipe", "pipe"],
        ...(this.account ?? {}),
      });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      child.on("error", reject);
      child.on("exit", (code) =>
        code === 0 ? resolve() : reject(new Error(`${command} failed (${code}): ${output}`)),
      );
    });
  }
}

function mysqlAccount(): Account {
  const uid = Number(execFileSync("id", ["-u", "mysql"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "mysql"]).toString().trim());
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
