// node bench/durable-path.mjs [--jobs 20000] [--concurrency 24] [--rounds 1] [--backlog 0]
//                             [--lib a/dist/index.js,b/dist/index.js] [--url postgres://…]
//                             [--prefetch N] [--statements] [--statement-limit 8]
//                             [--what-if "SQL run after migrating"]
//
// Where durable PostgreSQL's time goes on the processing path: one in-process worker drains
// `jobs` no-op jobs on a throwaway PostgreSQL with durable commits (fsync, synchronous_commit on),
// and the run reports, besides its rate, what the server did for it: commits, WAL bytes and WAL
// flushes per 1,000 jobs, and the jobs table's updates (how many were HOT). With several
// `--lib` builds (e.g. a copy of the branch point and this checkout), each round runs every
// build once, alternating (even rounds in reverse order), on a fresh database of the same server,
// so they share its state.
// `--backlog N` enqueues N jobs but measures the first `jobs` of them (a big backlog's rate).
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { benchDatabase } from "./databases.mjs";
import { enqueueNoopBacklog, importBuild } from "./noop-backlog.mjs";
import { printCostliestStatements, resetStatementStatistics, STATEMENT_STATISTICS } from "./pg-statements.mjs";
import { serverCpuMs } from "./server-cpu.mjs";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    rounds: { type: "string", default: "1" },
    backlog: { type: "string", default: "0" },
    lib: { type: "string", default: "firm-queue" },
    url: { type: "string" },
    statements: { type: "boolean", default: false },
    "statement-limit": { type: "string", default: "8" },
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
const settings = values.statements ? STATEMENT_STATISTICS : {};
const server = values.url ? undefined : await startPostgres({ durable: true, settings });
const adminUrl = values.url ?? server.url;
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    // Even rounds run the builds in reverse: the first run of a round is a few percent slower
    // whatever the build (identical builds in one round: docs/benchmarks.md, "Hot path, seventh
    // pass"), so a fixed order would favour the build that runs second.
    const order = round % 2 === 0 ? [...libs].reverse() : libs;
    for (const lib of order) console.log(JSON.stringify({ round, lib, ...(await runOnce(lib)) }));
  }
} finally {
  await server?.stop();
}

/** One drain with build `lib` on a fresh database. */
async function runOnce(lib) {
  const { FirmQueue, silentLogger } = await importBuild(lib);
  const database = await benchDatabase("postgres", adminUrl);
  const stats = new pg.Client({ connectionString: database.url });
  await stats.connect();
  try {
    const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
    await firm.migrate();
    // --what-if "SQL": a schema change to try (e.g. an index dropped), run after the migrations.
    if (values["what-if"]) await stats.query(values["what-if"]);
    const { finished } = await enqueueNoopBacklog(firm, { jobs, backlog });
    await stats.query("CHECKPOINT");
    if (values.statements) await resetStatementStatistics(stats);
    const before = await serverCounters(stats);
    const serverCpuBefore = serverCpuMs(adminUrl);
    const nodeCpuBefore = process.cpuUsage();
    const started = performance.now();
    const supervisor = await firm.start({
      workers: [{ concurrency, pollingInterval: 10, ...prefetch }],
      dispatchers: [],
    });
    await finished;
    const seconds = (performance.now() - started) / 1000;
    const nodeCpu = process.cpuUsage(nodeCpuBefore);
    const serverCpu = serverCpuMs(adminUrl) - serverCpuBefore;
    await supervisor.stop();
    await firm.close();
    // Each backend reports its statistics at most once a second, and at exit: closed, then read.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = await serverCounters(stats);
    if (values.statements) await printCostliestStatements(stats, jobs, { limit: Number(values["statement-limit"]) });
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
      load: loadavg()[0].toFixed(2),
    };
  } finally {
    await stats.end();
    await database.cleanup();
  }
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
