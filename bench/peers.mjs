// npm run bench:peers -- [--jobs 5000] [--backlog N] [--retained N] [--concurrency 10] [--latency 200]
//                        [--in-process-latency] [--polling 10] [--max-seconds 120] [--rounds 1]
//                        [--durability relaxed|durable|both | --durable] [--systems id,id,…]
//                        [--reference id] [--url URL] [--mysql-url URL] [--json FILE]
//                        [--worker-node-flags="--max-semi-space-size=2 …"]  (with "=": the value starts with "--")
//        npm run bench:peers -- --merge run1.json run2.json …   (tables of earlier runs, combined)
//
// firm-queue against other job queues, in one run, on the same servers: every PostgreSQL system
// gets a fresh database on ONE PostgreSQL server. Same workload for all (bench/peers/workload.mjs),
// each library through a small adapter (bench/peers/*.mjs), its workers in a process of their own
// (bench/peers/worker-process.mjs). Prints absolute numbers and ratios against firm-queue on
// PostgreSQL; progress goes to stderr, tables to stdout.
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { importPeer } from "./peers/adapter.mjs";
import { ADAPTERS, REFERENCE_ID } from "./peers/index.mjs";
import { printReport } from "./peers/report.mjs";
import { mergeResults, writeResults } from "./peers/results-file.mjs";
import { RoundServers } from "./peers/servers.mjs";
import { WorkerProcess } from "./peers/worker-handle.mjs";
import { QUEUES, runWorkload } from "./peers/workload.mjs";

const { values, positionals } = parseOptions({
  options: {
    jobs: { type: "string", default: "5000" },
    backlog: { type: "string" },
    retained: { type: "string", default: "0" },
    concurrency: { type: "string", default: "10" },
    latency: { type: "string", default: "200" },
    "in-process-latency": { type: "boolean", default: false },
    polling: { type: "string", default: "10" },
    "max-seconds": { type: "string", default: "120" },
    rounds: { type: "string", default: "1" },
    durability: { type: "string", default: "relaxed" },
    durable: { type: "boolean", default: false },
    systems: {
      type: "string",
      default: ADAPTERS.filter((adapter) => !adapter.onlyWhenNamed)
        .map((adapter) => adapter.id)
        .join(","),
    },
    reference: { type: "string", default: REFERENCE_ID },
    url: { type: "string" },
    "mysql-url": { type: "string" },
    json: { type: "string" },
    merge: { type: "boolean", default: false },
    // Node and V8 flags for every system's worker process alike (e.g. a smaller young generation).
    "worker-node-flags": { type: "string", default: "" },
  },
  allowPositionals: true,
});
const referenceId = values.reference;
if (!ADAPTERS.some((adapter) => adapter.id === referenceId)) fail(`--reference: unknown system ${referenceId}`);
if (values.merge) {
  // No measuring: the tables of several earlier runs' --json files, as if they were one run.
  if (positionals.length === 0) fail("--merge needs the --json files of earlier runs");
  let reports;
  try {
    reports = mergeResults(positionals);
  } catch (error) {
    fail(`cannot read the --json results: ${/** @type {Error} */ (error).message}`);
  }
  for (const report of reports)
    printReport({
      headings: [report.heading],
      rounds: report.rounds,
      jobs: report.jobs,
      latencySamples: report.latencySamples,
      referenceId,
    });
  process.exit(0);
}
if (positionals.length > 0) fail(`unexpected argument(s) ${positionals.join(" ")} (only --merge takes files)`);
const loadAtStart = loadAverage();
const workerNodeFlags = values["worker-node-flags"].split(" ").filter(Boolean);
const jobs = positive("jobs");
const backlog = values.backlog === undefined ? jobs : positive("backlog");
if (backlog < jobs)
  fail(`--backlog (${backlog}) must be at least --jobs (${jobs}): the backlog holds the jobs the rate is measured on`);
const retained = nonNegative("retained");
const concurrency = positive("concurrency");
const latencySamples = positive("latency");
const inProcessLatency = values["in-process-latency"];
const pollingInterval = positive("polling");
const maxSeconds = positive("max-seconds");
const rounds = positive("rounds");
const DURABILITY_MODES = { relaxed: ["relaxed"], durable: ["durable"], both: ["relaxed", "durable"] };
if (values.durable && values.durability !== "relaxed")
  fail("--durable is short for --durability durable: give one of them");
const durability = values.durable ? "durable" : values.durability;
const modes = /** @type {("relaxed" | "durable")[] | undefined} */ (DURABILITY_MODES[durability]);
if (!modes) fail(`--durability must be relaxed, durable or both, got ${JSON.stringify(durability)}`);
const wanted = values.systems
  .split(",")
  .map((id) => id.trim())
  .filter(Boolean);
const unknown = wanted.filter((id) => !ADAPTERS.some((adapter) => adapter.id === id));
if (unknown.length > 0)
  fail(`Unknown system(s) ${unknown.join(", ")}; known: ${ADAPTERS.map((adapter) => adapter.id).join(", ")}`);
const adapters = ADAPTERS.filter((adapter) => wanted.includes(adapter.id));

// Every library must load before any server starts: a missing one fails the run at once. (Only
// this process loads them all; each worker process loads its own system's library alone.)
for (const packageName of new Set(adapters.map((adapter) => adapter.packageName))) {
  try {
    await importPeer(packageName);
  } catch (error) {
    fail(
      packageName === "firm-queue"
        ? `firm-queue cannot be loaded (${String(error)}); run \`npm run build\` first`
        : /** @type {Error} */ (error).message,
    );
  }
}

/** Set by Ctrl-C: the clean-up under way, after which the process exits. */
let interrupted = /** @type {Promise<void> | undefined} */ (undefined);
/** The round in progress, so a Ctrl-C can still stop its servers and drop its databases. */
let current = /** @type {{ servers: RoundServers, cleanups: (() => Promise<void>)[] } | undefined} */ (undefined);
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, () => {
    progress(`\n${signal}: cleaning up…`);
    interrupted = tearDown().finally(() => process.exit(130));
  });
}

/** Rounds measured, per durability mode. */
const roundsByMode = new Map(modes.map((mode) => [mode, /** @type {import("./peers/report.mjs").Round[]} */ ([])]));
let failures = 0;
for (let round = 1; round <= rounds && !interrupted; round++) {
  // With both modes, even rounds start with the other one, as they run the systems in reverse.
  for (const mode of round % 2 === 1 ? modes : [...modes].reverse()) {
    if (interrupted) break;
    roundsByMode.get(mode)?.push(await runRound(round, mode));
  }
}

if (interrupted) await interrupted;

const reports = modes.map((mode) => ({
  durability: mode,
  heading: headingFor(mode),
  jobs,
  backlog,
  retained,
  concurrency,
  latencySamples,
  pollingInterval,
  maxSeconds,
  rounds: roundsByMode.get(mode) ?? [],
}));
for (const report of reports)
  printReport({ headings: [report.heading], rounds: report.rounds, jobs, latencySamples, referenceId });
if (values.json) writeResults(values.json, reports);
if (failures > 0) {
  progress(`\n${failures} system run(s) failed; see above.`);
  process.exitCode = 1;
}

/**
 * Every system once, on servers started for this round in this durability mode.
 * @param {number} round @param {"relaxed" | "durable"} mode
 */
async function runRound(round, mode) {
  const servers = new RoundServers({ postgresUrl: values.url, mysqlUrl: values["mysql-url"] }, progress, {
    durable: mode === "durable",
  });
  current = { servers, cleanups: [] };
  const results = [];
  try {
    // Even rounds run the systems in reverse, so a machine getting busier or quieter during a
    // run does not always favour the same systems.
    for (const adapter of round % 2 === 1 ? adapters : [...adapters].reverse()) {
      if (interrupted) break;
      results.push(await measureOne(adapter, round, mode));
    }
  } finally {
    await tearDown();
  }
  failures += results.filter((result) => result.error).length;
  const runOrder = results.map((result) => result.id);
  // Tables list systems in the usual order, whatever order they ran in.
  results.sort((a, b) => adapters.findIndex((x) => x.id === a.id) - adapters.findIndex((x) => x.id === b.id));
  return { round, runOrder, results, notes: Object.fromEntries(servers.notes) };
}

/**
 * Run the workload on one system with a fresh database; an error is recorded, not thrown, so the
 * other systems still run. Its worker process is stopped and its database dropped whatever happens.
 */
async function measureOne(adapter, round, mode) {
  const result = { id: adapter.id, label: adapter.label, version: "", settings: "" };
  // Held locally: a Ctrl-C clears `current` while this is still unwinding.
  const { servers, cleanups } = /** @type {NonNullable<typeof current>} */ (current);
  const skip = servers.unavailable(adapter.server);
  const title = `[round ${round}${modes.length > 1 ? `, ${mode}` : ""}] ${adapter.label}`;
  if (skip) {
    progress(`\n${title}: skipped, ${skip}`);
    return { ...result, skipped: skip };
  }
  progress(`\n${title}`);
  // Each exactly once, whoever gets there first: the worker process stopped, then the system
  // closed, then its database dropped (cleanups run newest first).
  let stopWorker = async () => {};
  let close = async () => {};
  let drop = async () => {};
  try {
    const database = await servers.freshDatabase(adapter.server);
    drop = once(database.cleanup);
    cleanups.push(drop);
    const options = { url: database.url, concurrency, pollingInterval, queues: QUEUES };
    if (retained > 0 && adapter.retains) progress(`  ${retained} finished jobs put in the jobs table`);
    const system = await adapter.open({ ...options, retained: adapter.retains ? retained : 0 });
    close = once(() => system.close());
    cleanups.push(close);
    result.version = system.version;
    result.settings =
      system.settings + (retained > 0 && !adapter.retains ? `; --retained does not apply (firm-queue only)` : "");
    // Registered before it is started, so a Ctrl-C during its start still stops it.
    let worker = /** @type {WorkerProcess | undefined} */ (undefined);
    stopWorker = once(async () => worker?.close());
    cleanups.push(stopWorker);
    worker = await WorkerProcess.start(adapter.id, options, workerNodeFlags);
    const measurement = await runWorkload(system, worker, {
      jobs,
      backlog,
      latencySamples,
      inProcessLatency,
      maxSeconds,
      progress: (message) => progress(`  ${message}`),
    });
    return { ...result, measurement };
  } catch (error) {
    progress(`  FAILED: ${/** @type {Error} */ (error)?.stack ?? String(error)}`);
    return { ...result, error: String(/** @type {Error} */ (error)?.message ?? error) };
  } finally {
    await stopWorker().catch((error) =>
      progress(`  could not stop the worker process of ${adapter.label}: ${String(error)}`),
    );
    await close().catch((error) => progress(`  could not close ${adapter.label}: ${String(error)}`));
    await drop().catch((error) => progress(`  could not drop the database: ${String(error)}`));
    cleanups.splice(
      0,
      cleanups.length,
      ...cleanups.filter((cleanup) => cleanup !== stopWorker && cleanup !== close && cleanup !== drop),
    );
  }
}

/** Stop worker processes, close open systems, drop their databases (newest first), then stop the round's servers. */
async function tearDown() {
  if (!current) return;
  const { servers, cleanups } = current;
  current = undefined;
  for (const cleanup of [...cleanups].reverse()) await withTimeout(cleanup(), 30_000).catch(() => undefined);
  await servers.stop();
}

/** The machine's load is part of the result: on a busy machine absolute numbers drop, ratios less. */
function headingFor(mode) {
  const servers =
    values.url || values["mysql-url"]
      ? `${mode === "durable" ? "durable" : "relaxed"} throwaway servers where no URL was given`
      : mode === "durable"
        ? "durable PostgreSQL and MariaDB (fsync=on, synchronous_commit=on; innodb_flush_log_at_trx_commit=1)"
        : "relaxed PostgreSQL and MariaDB (fsync=off, synchronous_commit=off; innodb_flush_log_at_trx_commit=2)";
  const workload = `${jobs} jobs${backlog > jobs ? ` timed of a ${backlog}-job backlog` : ""}${retained > 0 ? `, ${retained} finished jobs retained (firm-queue)` : ""}`;
  const latency = `${latencySamples} latency samples enqueued from another process${inProcessLatency ? " and as many from the worker's own" : ""}`;
  return `firm-queue compared with other queues on ${servers}: ${workload}, concurrency ${concurrency}, ${latency}, polling ${pollingInterval} ms where allowed, ${rounds} round(s), node ${process.version}${workerNodeFlags.length > 0 ? ` (worker processes: ${workerNodeFlags.join(" ")})` : ""}, ${cpus().length} CPUs, load average ${loadAtStart} at start and ${loadAverage()} at end`;
}

/** @template T @param {() => Promise<T>} fn @returns {() => Promise<T>} */
function once(fn) {
  /** @type {Promise<T> | undefined} */
  let promise;
  return () => (promise ??= fn());
}

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)),
  );
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function parseOptions(config) {
  try {
    return parseArgs(config);
  } catch (error) {
    fail(/** @type {Error} */ (error).message);
  }
}

function loadAverage() {
  return loadavg()[0].toFixed(1);
}

function positive(name) {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value <= 0)
    fail(`--${name} must be a positive integer, got ${JSON.stringify(values[name])}`);
  return value;
}

function nonNegative(name) {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < 0)
    fail(`--${name} must be a non-negative integer, got ${JSON.stringify(values[name])}`);
  return value;
}

function progress(message) {
  process.stderr.write(`${message}\n`);
}

function fail(message) {
  process.stderr.write(`bench:peers: ${message}\n`);
  process.exit(1);
}
