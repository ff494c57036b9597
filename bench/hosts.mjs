// npm run bench:hosts -- [--database postgres,mysql] [--jobs 6000] [--concurrency 10] [--hosts 1,2,3]
//
// Throughput with 1, 2 and 3 hosts on one database server. Each host is a network namespace
// (Linux, root: see scripts/netns.mjs) running the built `firm-queue start` (fork mode: a
// supervisor, one worker, one dispatcher) and reaching the server through a bridge, so the
// server sees each host's connections under its own address. For each round: a backlog of no-op
// jobs is enqueued, the hosts start, and the rate is taken between 10% and 90% of the backlog
// done. Also printed: the most connections each host held (pg_stat_activity /
// information_schema.processlist, by client address) and the server's CPU time per job.
// Every number comes from this run on this machine.
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import mysql from "mysql2/promise";
import pg from "pg";
import { FirmQueue, silentLogger } from "firm-queue";
import { createNetwork, netnsUnavailableReason } from "../scripts/netns.mjs";
import { startMariadb } from "../scripts/servers/mariadb.mjs";
import { startPostgres } from "../scripts/servers/postgres.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "dist/cli/main.js");
const FIXTURE = join(ROOT, "test/fixtures/multi-host-jobs.ts");

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "postgres,mysql" },
    jobs: { type: "string", default: "6000" },
    concurrency: { type: "string", default: "10" },
    hosts: { type: "string", default: "1,2,3" },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
const hostCounts = values.hosts.split(",").map(Number);

const unavailable = netnsUnavailableReason();
if (unavailable) {
  console.error(`bench:hosts needs network namespaces: ${unavailable}.`);
  process.exit(1);
}

const rows = [];
for (const dialect of values.database.split(",").map((name) => name.trim())) {
  const network = createNetwork(Math.max(...hostCounts));
  let server;
  try {
    server = await (dialect === "postgres" ? startPostgres : startMariadb)({
      extraListenAddresses: [network.bridgeAddress],
      clientNetworks: [network.subnet],
    });
    const local = new URL(server.url);
    local.pathname = "/firm_bench_hosts";
    await createDatabase(dialect, server.url);
    const remote = new URL(local.href);
    remote.hostname = network.bridgeAddress;
    const firm = new FirmQueue({ databaseUrl: local.href, logger: silentLogger });
    const noop = firm.defineJob("noop", () => undefined);
    await firm.migrate();
    for (const count of hostCounts) {
      process.stderr.write(`${dialect}: ${count} host(s), ${jobs} jobs…\n`);
      rows.push({
        dialect,
        hosts: count,
        ...(await round(dialect, firm, noop, server, network.hosts.slice(0, count), remote.href)),
      });
    }
    await firm.close();
  } finally {
    await server?.stop();
    network.destroy();
  }
}

console.log(
  `\nfirm-queue on several hosts: ${jobs} no-op jobs per round, one worker (concurrency ${concurrency}) and one dispatcher per host, fork mode, node ${process.version}\n`,
);
console.log("| database | hosts | jobs/s | connections per host (max seen) | server CPU per job (ms) |");
console.log("|---|---:|---:|---|---:|");
for (const row of rows) {
  console.log(
    `| ${row.dialect} | ${row.hosts} | ${row.rate.toFixed(0)} | ${row.connections.join(", ")} | ${row.cpuPerJob.toFixed(3)} |`,
  );
}

async function round(dialect, firm, noop, server, hosts, url) {
  const db = (await firm.database()).db;
  await db.deleteFrom("firm_queue_jobs").execute();
  await db.deleteFrom("firm_queue_processes").execute();
  const batch = 1000;
  for (let done = 0; done < jobs; done += batch)
    await noop.enqueueAll([...Array(Math.min(batch, jobs - done))].map(() => null));
  const cpuBefore = serverCpuMs(server);
  const children = hosts.map((host) => {
    const [command, args] = host.command(process.execPath, [
      CLI,
      "start",
      "--require",
      FIXTURE,
      "--database-url",
      url,
      "--concurrency",
      String(concurrency),
    ]);
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, FIRM_QUEUE_LOG_LEVEL: "error" },
      stdio: ["ignore", "ignore", "inherit"],
    });
    return { host, child, exited: new Promise((resolve) => child.on("close", resolve)) };
  });
  const peak = new Map(hosts.map((host) => [host.address, 0]));
  let low;
  let high;
  for (;;) {
    const finished = await countFinished(db);
    const now = performance.now();
    if (low === undefined && finished >= jobs * 0.1) low = { finished, now };
    if (finished >= jobs * 0.9 && high === undefined) high = { finished, now };
    for (const [address, count] of await connectionsByAddress(dialect, firm))
      if (peak.has(address)) peak.set(address, Math.max(peak.get(address), count));
    if (finished >= jobs) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const cpuPerJob = (serverCpuMs(server) - cpuBefore) / jobs;
  for (const { child } of children) child.kill("SIGTERM");
  await Promise.all(children.map(({ exited }) => exited));
  return {
    rate: (high.finished - low.finished) / ((high.now - low.now) / 1000),
    connections: [...peak.values()],
    cpuPerJob,
  };
}

async function countFinished(db) {
  const row = await db
    .selectFrom("firm_queue_jobs")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("finished_at", "is not", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Connections to the bench database by client address (loopback ones are this script's). */
async function connectionsByAddress(dialect, firm) {
  const { sql } = await import("kysely");
  const db = (await firm.database()).db;
  const query =
    dialect === "postgres"
      ? sql`SELECT host(client_addr) AS address, count(*)::int AS n FROM pg_stat_activity WHERE datname = 'firm_bench_hosts' GROUP BY 1`
      : sql`SELECT SUBSTRING_INDEX(HOST, ':', 1) AS address, COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = 'firm_bench_hosts' GROUP BY 1`;
  const { rows: found } = await query.execute(db);
  return found.map((row) => [row.address, Number(row.n)]);
}

/** CPU time (user + system) of the server's process tree, in ms, from /proc. */
function serverCpuMs(server) {
  const dir = dirname(server.logFile);
  const pidFile = readdirSync(dir).includes("mariadb.pid")
    ? join(dir, "mariadb.pid")
    : join(dir, "data", "postmaster.pid");
  const root = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  const ticks = 100; // USER_HZ on Linux
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pid = Number(entry);
    const parent = Number(fields[1]);
    if (pid === root || parent === root) total += Number(fields[11]) + Number(fields[12]);
  }
  return (total / ticks) * 1000;
}

async function createDatabase(dialect, adminUrl) {
  if (dialect === "postgres") {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query("CREATE DATABASE firm_bench_hosts");
    await client.end();
  } else {
    const connection = await mysql.createConnection(adminUrl);
    await connection.query("CREATE DATABASE firm_bench_hosts CHARACTER SET utf8mb4");
    await connection.end();
  }
}
