// node bench/mariadb-path.mjs [--jobs 20000] [--concurrency 24] [--rounds 1]
//                             [--lib a/dist/index.js,b/dist/index.js] [--statements] [--cpu-prof dir]
//
// Where durable MariaDB's time goes on the processing path (the MariaDB twin of
// bench/durable-path.mjs): one in-process worker drains `jobs` no-op jobs on a throwaway MariaDB
// with durable commits (innodb_flush_log_at_trx_commit=1, doublewrite on: what the peers bench
// runs), and the run reports, besides its rate, what the server did for it per 1,000 jobs:
// commits, InnoDB fsyncs and redo-log writes, the handler's row reads and writes (Handler_*:
// key lookups, index steps, scan steps, rows written/updated/deleted), row-lock waits, and CPU
// time of the worker process and of this server's mariadbd. With several `--lib` builds each round runs every build
// once, alternating, on a fresh database of the same server. `--statements` turns
// performance_schema on and prints the costliest statement digests (a claim's or finish's block
// is one statement there: MariaDB does not report the statements inside an anonymous block).
// `--cpu-prof dir` writes a V8 CPU profile of each drain there.
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import mysql from "mysql2/promise";
import { startMariadb } from "../scripts/servers/mariadb.mjs";
import { benchDatabase } from "./databases.mjs";
import { enqueueNoopBacklog, importBuild } from "./noop-backlog.mjs";
import { serverCpuMs } from "./server-cpu.mjs";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    rounds: { type: "string", default: "1" },
    lib: { type: "string", default: "firm-queue" },
    statements: { type: "boolean", default: false },
    "cpu-prof": { type: "string" },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
const libs = values.lib.split(",");

const COUNTERS = [
  "Com_commit",
  "Innodb_data_fsyncs",
  "Innodb_log_writes",
  "Handler_read_key",
  "Handler_read_next",
  "Handler_read_rnd_next",
  "Handler_write",
  "Handler_update",
  "Handler_delete",
  "Innodb_row_lock_waits",
  "Questions",
];

const settings = values.statements
  ? {
      performance_schema: "ON",
      "performance-schema-consumer-statements-digest": "ON",
    }
  : {};
const server = await startMariadb({ durable: true, mariadbOptions: settings });
try {
  for (let round = 1; round <= Number(values.rounds); round++)
    for (const lib of libs) console.log(JSON.stringify({ round, lib, ...(await runOnce(lib, round)) }));
} finally {
  await server.stop();
}

/** One drain with build `lib` on a fresh database. */
async function runOnce(lib, round) {
  const { FirmQueue, silentLogger } = await importBuild(lib);
  const database = await benchDatabase("mysql", server.url);
  const stats = await mysql.createConnection(database.url);
  try {
    const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
    await firm.migrate();
    const { finished } = await enqueueNoopBacklog(firm, { jobs });
    if (values.statements) {
      await stats.query("TRUNCATE performance_schema.events_statements_summary_by_digest");
    }
    const profiler = values["cpu-prof"] ? await startProfiler() : undefined;
    const before = await serverCounters(stats);
    const serverCpuBefore = serverCpuMs(server.url);
    const nodeCpuBefore = process.cpuUsage();
    const started = performance.now();
    const supervisor = await firm.start({ workers: [{ concurrency, pollingInterval: 10 }], dispatchers: [] });
    await finished;
    const seconds = (performance.now() - started) / 1000;
    const nodeCpu = process.cpuUsage(nodeCpuBefore);
    const serverCpu = serverCpuMs(server.url) - serverCpuBefore;
    const after = await serverCounters(stats);
    if (profiler) await profiler.stop(join(values["cpu-prof"], `round${round}-${libs.indexOf(lib)}.cpuprofile`));
    await supervisor.stop();
    await firm.close();
    if (values.statements) await printStatements(stats, database.url);
    const per1000 = (name) => Math.round(((after[name] - before[name]) * 1000) / jobs);
    return {
      jobsPerSecond: Math.round(jobs / seconds),
      commitsPer1000: per1000("Com_commit"),
      dataFsyncsPer1000: per1000("Innodb_data_fsyncs"),
      logWritesPer1000: per1000("Innodb_log_writes"),
      readKeyPer1000: per1000("Handler_read_key"),
      readNextPer1000: per1000("Handler_read_next"),
      readRndNextPer1000: per1000("Handler_read_rnd_next"),
      writePer1000: per1000("Handler_write"),
      updatePer1000: per1000("Handler_update"),
      deletePer1000: per1000("Handler_delete"),
      rowLockWaitsPer1000: per1000("Innodb_row_lock_waits"),
      questionsPer1000: per1000("Questions"),
      nodeCpuMsPer1000: Math.round((nodeCpu.user + nodeCpu.system) / jobs),
      serverCpuMsPer1000: Math.round((serverCpu * 1000) / jobs),
      load: loadavg()[0].toFixed(2),
    };
  } finally {
    await stats.end();
    await database.cleanup();
  }
}

/** The server's global counters this run looks at. */
async function serverCounters(connection) {
  const [rows] = await connection.query(
    `SHOW GLOBAL STATUS WHERE Variable_name IN (${COUNTERS.map(() => "?").join(",")})`,
    COUNTERS,
  );
  return Object.fromEntries(rows.map((row) => [row.Variable_name, Number(row.Value)]));
}

/** The run's costliest statement digests in this database, per 1,000 jobs. */
async function printStatements(connection, url) {
  const name = new URL(url).pathname.slice(1);
  const [rows] = await connection.query(
    `SELECT COUNT_STAR AS calls, SUM_TIMER_WAIT / 1e9 AS ms, SUM_LOCK_TIME / 1e9 AS lock_ms, SUM_ROWS_EXAMINED AS examined,
            LEFT(REGEXP_REPLACE(DIGEST_TEXT, '\\\\s+', ' '), 110) AS query
     FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = ?
     ORDER BY SUM_TIMER_WAIT DESC LIMIT 12`,
    [name],
  );
  print(rows);
}

function print(rows) {
  for (const row of rows)
    console.log(
      `  ${String(Math.round((Number(row.ms) * 1000) / jobs)).padStart(5)} ms/1000 jobs (lock ${String(Math.round((Number(row.lock_ms) * 1000) / jobs)).padStart(4)})  ${String(row.calls).padStart(6)} calls  ${String(row.examined).padStart(8)} examined  ${row.query}`,
    );
}

/** Start V8's profiler on this process; stop(file) writes the profile. */
async function startProfiler() {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return {
    async stop(file) {
      const { profile } = await session.post("Profiler.stop");
      mkdirSync(values["cpu-prof"], { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
