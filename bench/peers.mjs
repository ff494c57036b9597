// npm run bench:peers -- [--jobs 5000] [--concurrency 10] [--latency 200] [--polling 10]
//                        [--max-seconds 30] [--rounds 1] [--systems id,id,…] [--url URL] [--mysql-url URL]
//                        [--json FILE]
//        npm run bench:peers -- --merge run1.json run2.json …   (tables of earlier runs, combined)
//
// firm-queue against other job queues, in one run, on the same servers: every PostgreSQL system
// gets a fresh database on ONE PostgreSQL server. Same workload for all (bench/peers/workload.mjs),
// each library through a small adapter (bench/peers/*.mjs). Prints absolute numbers and ratios
// against firm-queue on PostgreSQL; progress goes to stderr, tables to stdout.
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { importPeer } from "./peers/adapter.mjs";
import { ADAPTERS, REFERENCE_ID } from "./peers/index.mjs";
import { printReport } from "./peers/report.mjs";
import { RoundServers } from "./peers/servers.mjs";
import { QUEUES, runWorkload } from "./peers/workload.mjs";

const { values, positionals } = parseOptions({
  options: {
    jobs: { type: "string", default: "5000" },
    concurrency: { type: "string", default: "10" },
    latency: { type: "string", default: "200" },
    polling: { type: "string", default: "10" },
    "max-seconds": { type: "string", default: "30" },
    rounds: { type: "string", default: "1" },
    systems: { type: "string", default: ADAPTERS.map((adapter) => adapter.id).join(",") },
    url: { type: "string" },
    "mysql-url": { type: "string" },
    json: { type: "string" },
    merge: { type: "boolean", default: false },
  },
  allowPositionals: true,
});
if (values.merge) {
  // No measuring: the tables of several earlier runs' --json files, as if they were one run.
  const files = positionals.map((file) => {
    try {
      return JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      return fail(`cannot read ${file} as a --json result: ${/** @type {Error} */ (error).message}`);
    }
  });
  if (files.length === 0) fail("--merge needs the --json files of earlier runs");
  const rounds = files.flatMap((file) => file.rounds).map((round, index) => ({ ...round, round: index + 1 }));
  printReport({
    headings: files.map((file) => file.heading),
    rounds,
    jobs: files[0].jobs,
    latencySamples: files[0].latencySamples,
    referenceId: REFERENCE_ID,
  });
  process.exit(0);
}
if (positionals.length > 0) fail(`unexpected argument(s) ${positionals.join(" ")} (only --merge takes files)`);
const loadAtStart = loadAverage();
const jobs = positive("jobs");
const concurrency = positive("concurrency");
const latencySamples = positive("latency");
const pollingInterval = positive("polling");
const maxSeconds = positive("max-seconds");
const rounds = positive("rounds");
const wanted = values.systems
  .split(",")
  .map((id) => id.trim())
  .filter(Boolean);
const unknown = wanted.filter((id) => !ADAPTERS.some((adapter) => adapter.id === id));
if (unknown.length > 0)
  fail(`Unknown system(s) ${unknown.join(", ")}; known: ${ADAPTERS.map((adapter) => adapter.id).join(", ")}`);
const adapters = ADAPTERS.filter((adapter) => wanted.includes(adapter.id));

// Every library must load before any server starts: a missing one fails the run at once.
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

const allRounds = [];
let failures = 0;
for (let round = 1; round <= rounds && !interrupted; round++) {
  const servers = new RoundServers({ postgresUrl: values.url, mysqlUrl: values["mysql-url"] }, progress);
  current = { servers, cleanups: [] };
  const results = [];
  try {
    // Even rounds run the systems in reverse, so a machine getting busier or quieter during a
    // run does not always favour the same systems.
    for (const adapter of round % 2 === 1 ? adapters : [...adapters].reverse()) {
      if (interrupted) break;
      results.push(await measureOne(adapter, round));
    }
  } finally {
    await tearDown();
  }
  failures += results.filter((result) => result.error).length;
  const runOrder = results.map((result) => result.id);
  // Tables list systems in the usual order, whatever order they ran in.
  results.sort((a, b) => adapters.findIndex((x) => x.id === a.id) - adapters.findIndex((x) => x.id === b.id));
  allRounds.push({ round, runOrder, results, notes: Object.fromEntries(servers.notes) });
}

if (interrupted) await interrupted;

// The machine's load is part of the result: on a busy machine absolute numbers drop, ratios less.
const heading = `firm-queue compared with other queues: ${jobs} jobs, concurrency ${concurrency}, ${latencySamples} latency samples, polling ${pollingInterval} ms where allowed, ${rounds} round(s), node ${process.version}, ${cpus().length} CPUs, load average ${loadAtStart} at start and ${loadAverage()} at end`;
printReport({ headings: [heading], rounds: allRounds, jobs, latencySamples, referenceId: REFERENCE_ID });
if (values.json)
  writeFileSync(
    values.json,
    `${JSON.stringify({ heading, jobs, concurrency, latencySamples, pollingInterval, maxSeconds, rounds: allRounds }, null, 2)}\n`,
  );
if (failures > 0) {
  progress(`\n${failures} system run(s) failed; see above.`);
  process.exitCode = 1;
}

/**
 * Run the workload on one system with a fresh database; an error is recorded, not thrown, so the
 * other systems still run. The database is dropped whatever happens.
 */
async function measureOne(adapter, round) {
  const result = { id: adapter.id, label: adapter.label, version: "", settings: "" };
  // Held locally: a Ctrl-C clears `current` while this is still unwinding.
  const { servers, cleanups } = current;
  const skip = servers.unavailable(adapter.server);
  if (skip) {
    progress(`\n[round ${round}] ${adapter.label}: skipped, ${skip}`);
    return { ...result, skipped: skip };
  }
  progress(`\n[round ${round}] ${adapter.label}`);
  // Closed before its database is dropped, and both exactly once, whoever gets there first.
  let close = async () => {};
  let drop = async () => {};
  try {
    const database = await servers.freshDatabase(adapter.server);
    drop = once(database.cleanup);
    cleanups.push(drop);
    const system = await adapter.open({ url: database.url, concurrency, pollingInterval, queues: QUEUES });
    close = once(() => system.close());
    cleanups.push(close);
    result.version = system.version;
    result.settings = system.settings;
    const measurement = await runWorkload(system, {
      jobs,
      latencySamples,
      maxSeconds,
      progress: (message) => progress(`  ${message}`),
    });
    return { ...result, measurement };
  } catch (error) {
    progress(`  FAILED: ${/** @type {Error} */ (error)?.stack ?? String(error)}`);
    return { ...result, error: String(/** @type {Error} */ (error)?.message ?? error) };
  } finally {
    await close().catch((error) => progress(`  could not close ${adapter.label}: ${String(error)}`));
    await drop().catch((error) => progress(`  could not drop the database: ${String(error)}`));
    cleanups.splice(0, cleanups.length, ...cleanups.filter((cleanup) => cleanup !== close && cleanup !== drop));
  }
}

/** Close open systems, drop their databases (newest first), then stop the round's servers. */
async function tearDown() {
  if (!current) return;
  const { servers, cleanups } = current;
  current = undefined;
  for (const cleanup of [...cleanups].reverse()) await withTimeout(cleanup(), 15_000).catch(() => undefined);
  await servers.stop();
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

function progress(message) {
  process.stderr.write(`${message}\n`);
}

function fail(message) {
  process.stderr.write(`bench:peers: ${message}\n`);
  process.exit(1);
}
