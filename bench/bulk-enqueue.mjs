// node bench/bulk-enqueue.mjs [--database postgres|sqlite|mysql] [--batches 50] [--size 1000]
//                             [--rounds 3] [--lib a/dist/index.js,b/dist/index.js] [--graphile]
//                             [--statements] [--explain] [--what-if "SQL"] [--url server-url]
//
// Bulk enqueue alone: `batches` calls of `enqueueAll` with `size` jobs each, on a fresh database
// of one throwaway server with durable commits (PostgreSQL: fsync and synchronous_commit on;
// MariaDB: innodb_flush_log_at_trx_commit=1). Each round runs every `--lib` build once, in turn,
// and with `--graphile` graphile-worker's `addJobs` with the same batches on the same server, so
// ratios come from neighbouring runs. Per run: jobs/s, and CPU per 1,000 jobs of this process and
// (PostgreSQL) of the server's processes. `--statements` prints pg_stat_statements' execution and
// planning time per 1,000 jobs; `--explain` loads auto_explain and prints the plan (ANALYZE,
// BUFFERS, WAL, triggers) of the last bulk statement of the first run. `--what-if SQL` adds a run
// of each build with SQL run after migrating (a schema experiment, e.g. an index dropped). Run it under
// `node --cpu-prof` for where this process's time goes.
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { startMariadb } from "../scripts/servers/mariadb.mjs";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { benchDatabase } from "./databases.mjs";
import { importBuild } from "./noop-backlog.mjs";
import { printCostliestStatements, resetStatementStatistics, STATEMENT_STATISTICS } from "./pg-statements.mjs";
import { serverCpuMs } from "./server-cpu.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "postgres" },
    batches: { type: "string", default: "50" },
    size: { type: "string", default: "1000" },
    rounds: { type: "string", default: "1" },
    lib: { type: "string", default: "firm-queue" },
    graphile: { type: "boolean", default: false },
    statements: { type: "boolean", default: false },
    explain: { type: "boolean", default: false },
    "what-if": { type: "string" },
    url: { type: "string" },
  },
});
const dialect = values.database;
const batches = Number(values.batches);
const size = Number(values.size);
const jobs = batches * size;
const WARM_UP_BATCHES = 3;
const postgres = dialect === "postgres";

const settings = {
  ...(values.statements ? STATEMENT_STATISTICS : {}),
  ...(values.explain
    ? {
        session_preload_libraries: "auto_explain",
        "auto_explain.log_min_duration": "5",
        "auto_explain.log_analyze": "on",
        "auto_explain.log_buffers": "on",
        "auto_explain.log_wal": "on",
        "auto_explain.log_triggers": "on",
        "auto_explain.log_verbose": "on",
      }
    : {}),
};
let server;
if (!values.url && dialect === "postgres") server = await startPostgres({ durable: true, settings });
if (!values.url && dialect === "mysql") server = await startMariadb({ durable: true });
const adminUrl = values.url ?? server?.url;

const builds = values.lib.split(",");
const whatIf = values["what-if"];
const runs = [
  ...builds.flatMap((lib) => (whatIf ? [lib, `${lib}+what-if`] : [lib])),
  ...(values.graphile ? ["graphile-worker"] : []),
];
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const lib of runs) {
      const result = await runOnce(lib);
      console.log(JSON.stringify({ round, lib, ...result, load: loadavg()[0].toFixed(2) }));
    }
  }
  if (values.explain && server) printLastPlan(server.logFile);
} finally {
  await server?.stop();
}

/** One timed bulk enqueue of `jobs` jobs with `lib` on a fresh database. */
async function runOnce(lib) {
  const database = await benchDatabase(dialect, adminUrl);
  const stats = postgres ? new pg.Client({ connectionString: database.url }) : undefined;
  await stats?.connect();
  const target =
    lib === "graphile-worker"
      ? await openGraphile(database.url)
      : await openFirmQueue(lib.replace(/\+what-if$/, ""), database.url);
  if (lib.endsWith("+what-if")) await stats.query(whatIf);
  try {
    let next = 0;
    const batch = () => Array.from({ length: size }, () => ({ i: next++ }));
    for (let i = 0; i < WARM_UP_BATCHES; i++) await target.enqueueAll(batch());
    if (values.statements && postgres) await resetStatementStatistics(stats);
    // The payloads are made before the clock starts: only the library's work is timed.
    const payloads = Array.from({ length: batches }, batch);
    const serverBefore = postgresCpuMs();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (const payload of payloads) await target.enqueueAll(payload);
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const serverCpu = postgresCpuMs() - serverBefore;
    if (values.statements && postgres) await printCostliestStatements(stats, jobs, { limit: 4 });
    return {
      jobsPerSecond: Math.round(jobs / seconds),
      nodeCpuMsPer1000: Number(((cpu.user + cpu.system) / jobs).toFixed(1)),
      ...(postgres && !values.url ? { serverCpuMsPer1000: Number(((serverCpu * 1000) / jobs).toFixed(1)) } : {}),
    };
  } finally {
    await target.close();
    await stats?.end();
    await database.cleanup();
  }
}

async function openFirmQueue(lib, url) {
  const { FirmQueue, silentLogger } = await importBuild(lib);
  const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger, poolSize: 4 });
  await firm.migrate();
  const job = firm.defineJob("bench", async () => {}, { queue: "bench" });
  return { enqueueAll: (payloads) => job.enqueueAll(payloads), close: () => firm.close() };
}

async function openGraphile(url) {
  const { makeWorkerUtils, Logger } = await import("graphile-worker");
  const utils = await makeWorkerUtils({ connectionString: url, logger: new Logger(() => () => {}) });
  await utils.migrate();
  return {
    enqueueAll: (payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: "bench", payload }))),
    close: () => utils.release(),
  };
}

/** The last plan auto_explain logged for a statement that inserted jobs. */
function printLastPlan(logFile) {
  const entries = readFileSync(logFile, "utf8").split(/\n(?=\S.*LOG: {2}duration:)/);
  const plans = entries.filter((entry) => /Insert on \S*firm_queue_jobs|Insert on \S*jobs\b/.test(entry));
  // The parameters' values (a thousand of each) are cut: the plan is what is wanted.
  const plan = (plans.at(-1) ?? "(no plan logged)").replace(
    /'[{[][^']{200,}'/g,
    (literal) => `${literal.slice(0, 60)}…'`,
  );
  console.log(plan);
}

/** CPU time (ms) of this run's PostgreSQL server; 0 for MariaDB, SQLite or a server given by URL. */
function postgresCpuMs() {
  return postgres && server ? serverCpuMs(server.url) : 0;
}
