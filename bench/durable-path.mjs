// node bench/durable-path.mjs [--jobs 20000] [--concurrency 24] [--rounds 1] [--backlog 0]
//                             [--lib a/dist/index.js,b/dist/index.js] [--url postgres://…]
//                             [--prefetch N] [--statements] [--what-if "SQL run after migrating"]
//
// Where durable PostgreSQL's time goes on the processing path: one in-process worker drains
// `jobs` no-op jobs on a throwaway PostgreSQL with durable commits (fsync, synchronous_commit on),
// and the run reports, besides its rate, what the server did for it: commits, WAL bytes and WAL
// flushes per 1,000 jobs, and the jobs table's updates (how many were HOT). With several
// `--lib` builds (e.g. a copy of the branch point and this checkout), each round runs every
// build once, alternating, on a fresh database of the same server, so they share its state.
// `--backlog N` enqueues N jobs but measures the first `jobs` of them (a big backlog's rate).
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import pg from "pg";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { benchDatabase } from "./databases.mjs";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    rounds: { type: "string", default: "1" },
    backlog: { type: "string", default: "0" },
    lib: { type: "string", default: "firm-queue" },
    url: { type: "string" },
    statements: { type: "boolean", default: false },
    prefetch: { type: "string" },
    "what-if": { type: "string" },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
const backlog = Math.max(jobs, Number(values.backlog));
const libs = values.lib.split(",");
const prefetch = values.prefetch === undefined ? {} : { prefetch: Number(values.prefetch) };

// --statements: pg_stat_statements on the throwaway server, and each run prints its statements'
// time, rows and WAL (a statement's plan and execution only: commit flushes are not in it).
const settings = values.statements
  ? {
      shared_preload_libraries: "pg_stat_statements",
      "pg_stat_statements.track_utility": "off",
      "pg_stat_statements.track_planning": "on",
    }
  : {};
const server = values.url ? undefined : await startPostgres({ durable: true, settings });
const adminUrl = values.url ?? server.url;
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const lib of libs) console.log(JSON.stringify({ round, lib, ...(await runOnce(lib)) }));
  }
} finally {
  await server?.stop();
}

/** One drain with build `lib` on a fresh database. */
async function runOnce(lib) {
  const { FirmQueue, silentLogger } = await import(lib === "firm-queue" ? lib : pathToFileURL(resolve(lib)).href);
  const database = await benchDatabase("postgres", adminUrl);
  const stats = new pg.Client({ connectionString: database.url });
  await stats.connect();
  try {
    const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
    await firm.migrate();
    // --what-if "SQL": a schema change to try (e.g. an index dropped), run after the migrations.
    if (values["what-if"]) await stats.query(values["what-if"]);
    let done = 0;
    let reached;
    const finished = new Promise((resolve) => (reached = resolve));
    const noop = firm.defineJob("noop", async () => {
      if (++done === jobs) reached();
    });
    const all = Array.from({ length: backlog }, (_, i) => ({ i }));
    for (let i = 0; i < all.length; i += 1000) await noop.enqueueAll(all.slice(i, i + 1000));
    await stats.query("CHECKPOINT");
    if (values.statements) {
      await stats.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      await stats.query("SELECT pg_stat_statements_reset()");
    }
    const before = await serverCounters(stats);
    const serverCpuBefore = postgresCpuMs();
    const nodeCpuBefore = process.cpuUsage();
    const started = performance.now();
    const supervisor = await firm.start({
      workers: [{ concurrency, pollingInterval: 10, ...prefetch }],
      dispatchers: [],
    });
    await finished;
    const seconds = (performance.now() - started) / 1000;
    const nodeCpu = process.cpuUsage(nodeCpuBefore);
    const serverCpu = postgresCpuMs() - serverCpuBefore;
    await supervisor.stop();
    await firm.close();
    // Each backend reports its statistics at most once a second, and at exit: closed, then read.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = await serverCounters(stats);
    if (values.statements) await printStatements(stats);
    const per1000 = (name) => Math.round(((after[name] - before[name]) * 1000) / jobs);
    return {
      jobsPerSecond: Math.round(jobs / seconds),
      commitsPer1000: per1000("commits"),
      walBytesPerJob: Math.round((after.wal - before.wal) / jobs),
      walSyncsPer1000: per1000("walSyncs"),
      jobUpdatesPer1000: per1000("updates"),
      hotUpdatesPer1000: per1000("hot"),
      nodeCpuMsPer1000: Math.round((nodeCpu.user + nodeCpu.system) / jobs),
      nodeSystemCpuMsPer1000: Math.round(nodeCpu.system / jobs),
      serverCpuMsPer1000: Math.round((serverCpu * 1000) / jobs),
      load: (await import("node:os")).loadavg()[0].toFixed(2),
    };
  } finally {
    await stats.end();
    await database.cleanup();
  }
}

/** The run's costliest statements in this database, per 1,000 jobs. */
async function printStatements(client) {
  const { rows } = await client.query(
    `SELECT calls, rows, total_exec_time AS ms, total_plan_time AS plan_ms, wal_bytes, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query
     FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
     ORDER BY total_exec_time DESC LIMIT 8`,
  );
  for (const row of rows)
    console.log(
      `  ${String(Math.round((Number(row.ms) * 1000) / jobs)).padStart(5)} ms/1000 jobs (+${String(Math.round((Number(row.plan_ms) * 1000) / jobs)).padStart(3)} planning)  ${String(row.calls).padStart(6)} calls  ${String(row.rows).padStart(7)} rows  ${String(Math.round(Number(row.wal_bytes) / jobs)).padStart(5)} WAL B/job  ${row.query}`,
    );
}

/** CPU time (user + system, ms) of every process named postgres on this machine, alive now. */
function postgresCpuMs() {
  const tick = 10; // ms per clock tick (USER_HZ 100 on Linux)
  let total = 0;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      if (!stat.slice(stat.indexOf("(") + 1, close).startsWith("postgres")) continue;
      const fields = stat.slice(close + 2).split(" ");
      total += (Number(fields[11]) + Number(fields[12])) * tick;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** The server's counters this run looks at (statistics are flushed first so they are current). */
async function serverCounters(client) {
  await client.query("SELECT pg_stat_force_next_flush()").catch(() => undefined);
  const { rows } = await client.query(`
    SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()) AS commits,
           pg_current_wal_lsn() - '0/0'::pg_lsn AS wal,
           (SELECT wal_sync FROM pg_stat_wal) AS wal_syncs,
           (SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'firm_queue_jobs') AS updates,
           (SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'firm_queue_jobs') AS hot`);
  const row = rows[0];
  return {
    commits: Number(row.commits),
    wal: Number(row.wal),
    walSyncs: Number(row.wal_syncs),
    updates: Number(row.updates),
    hot: Number(row.hot),
  };
}
