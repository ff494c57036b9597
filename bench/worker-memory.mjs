// npm run bench:worker-memory -- [--jobs 20000] [--concurrency 24] [--rounds 1]
//                                 [--dialects postgres,sqlite,mysql]
//                                 [--flags "|--max-semi-space-size=4|--max-semi-space-size=2"]
//
// Where a firm-queue worker's resident memory goes (durable PostgreSQL by default; `--dialects`
// adds SQLite and durable MariaDB), stage by stage, in a fresh process for each set of node flags
// (`--flags`: sets separated by `|`, the empty set meaning node's defaults):
//   - node alone, before anything is imported;
//   - after importing firm-queue (its modules and Kysely's);
//   - with its pool open (the driver loaded) and after a forced collection, before the worker
//     starts; the schema is migrated and the `jobs` no-op jobs enqueued by this script's own
//     process beforehand, as a worker process of a deployed application (a fork-mode child) finds
//     its database migrated and jobs waiting, enqueued elsewhere;
//   - the largest resident set while one in-process worker (concurrency `concurrency`) drains them,
//     sampled every 20 ms as `bench:peers` does, with the rate;
//   - V8's heap spaces at the end of the run (what each space has reserved).
// Each round runs every flag set once per database, in turn (even rounds in reverse order), and the
// summary gives each set's rate and peak as ratios to the first set's in the same round.
// The young generation ("new") is what V8 grows under a busy worker: compare its size across flags.
// The measuring process imports nothing at the top but node's argument parser, so that "node
// alone" is node alone; the parent's helpers are imported where the parent uses them.
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    rounds: { type: "string", default: "1" },
    dialects: { type: "string", default: "postgres" },
    flags: { type: "string", default: "|--max-semi-space-size=4|--max-semi-space-size=2" },
    child: { type: "boolean", default: false },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
if (!(jobs > 0) || !(concurrency > 0)) throw new Error("--jobs and --concurrency must be positive");

if (values.child) await measure();
else await compare();

/** Starts the servers, then one child per database, flag set and round, and prints a table. */
async function compare() {
  const { spawnSync } = await import("node:child_process");
  const { loadavg } = await import("node:os");
  const { fileURLToPath } = await import("node:url");
  const { startPostgres } = await import("../scripts/servers/postgres.mjs");
  const { startMariadb } = await import("../scripts/servers/mariadb.mjs");
  const flagSets = values.flags.split("|").map((set) => set.trim());
  const dialects = values.dialects.split(",").map((dialect) => dialect.trim());
  for (const dialect of dialects) {
    if (!["postgres", "sqlite", "mysql"].includes(dialect)) throw new Error(`--dialects: unknown ${dialect}`);
  }
  const servers = {};
  if (dialects.includes("postgres")) servers.postgres = await startPostgres({ durable: true });
  if (dialects.includes("mysql")) servers.mysql = await startMariadb({ durable: true });
  const load = () =>
    loadavg()
      .map((value) => value.toFixed(2))
      .join(" ");
  const results = [];
  try {
    console.log(
      `firm-queue worker memory (MB), ${jobs} no-op jobs, concurrency ${concurrency}, durable servers; ` +
        `rss at each stage, heap spaces reserved at the end; load average ${load()}`,
    );
    console.log(
      "database | flags | rounds: node alone, imported, pool open, peak while running, rate (jobs/s) | new, old, code spaces",
    );
    for (let round = 1; round <= Number(values.rounds); round++) {
      for (const dialect of dialects) {
        // Even rounds in reverse: a fixed order would favour whichever set runs in the same place.
        for (const flags of round % 2 === 0 ? [...flagSets].reverse() : flagSets) {
          const database = await preparedDatabase(dialect, servers[dialect]?.url);
          const script = fileURLToPath(import.meta.url);
          const args = ["--expose-gc", ...flags.split(/\s+/).filter(Boolean), script, "--child", "--jobs", `${jobs}`];
          const child = spawnSync(process.execPath, [...args, "--concurrency", `${concurrency}`], {
            env: { ...process.env, FIRM_QUEUE_BENCH_URL: database.url },
            encoding: "utf8",
          });
          await database.cleanup();
          if (child.status !== 0) throw new Error(`the measuring process failed:\n${child.stderr}`);
          const r = JSON.parse(child.stdout.trim().split("\n").at(-1));
          results.push({ round, dialect, flags, ...r });
          console.log(
            `${dialect} | ${flags || "(defaults)"} | round ${round}: ${r.bare}, ${r.imported}, ${r.connected}, ${r.peak}, ${r.rate} | ` +
              `${r.spaces.new}, ${r.spaces.old}, ${r.spaces.code}`,
          );
        }
      }
    }
    printRatios(results, dialects, flagSets);
    console.log(`load average at the end: ${load()}`);
  } finally {
    for (const server of Object.values(servers)) await server.stop();
  }
}

/** Each flag set's rate and peak against the first set's in the same round and database: median (range). */
function printRatios(results, dialects, flagSets) {
  const median = (list) => {
    const sorted = [...list].sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  };
  const spread = (list) =>
    `${median(list).toFixed(2)} (${Math.min(...list).toFixed(2)}-${Math.max(...list).toFixed(2)})`;
  console.log(
    `\nagainst ${flagSets[0] || "(defaults)"} in the same round: rate ratio, peak ratio, median (range); peaks in MB`,
  );
  for (const dialect of dialects) {
    for (const flags of flagSets.slice(1)) {
      const pairs = results
        .filter((r) => r.dialect === dialect && r.flags === flags)
        .map((r) => [r, results.find((b) => b.dialect === dialect && b.round === r.round && b.flags === flagSets[0])]);
      const rates = pairs.map(([r, base]) => r.rate / base.rate);
      const peaks = pairs.map(([r, base]) => r.peak / base.peak);
      console.log(
        `${dialect} | ${flags || "(defaults)"} | rate ${spread(rates)} | peak ${spread(peaks)} | ` +
          `peaks ${pairs.map(([r]) => r.peak).join(", ")} against ${pairs.map(([, base]) => base.peak).join(", ")}`,
      );
    }
  }
}

/**
 * A fresh database (a throwaway SQLite file, or one on the server at `adminUrl`), with firm-queue's
 * schema and `jobs` no-op jobs waiting.
 */
async function preparedDatabase(dialect, adminUrl) {
  const { FirmQueue, silentLogger } = await import("../dist/index.js");
  const { benchDatabase } = await import("./databases.mjs");
  const database = await benchDatabase(dialect, adminUrl);
  const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger });
  try {
    await firm.migrate();
    const job = firm.defineJob("memory", () => {});
    for (let start = 0; start < jobs; start += 1000) {
      await job.enqueueAll(Array.from({ length: Math.min(1000, jobs - start) }, (_, n) => ({ n: start + n })));
    }
  } finally {
    await firm.close();
  }
  return database;
}

/** The measuring process: prints one JSON line. */
async function measure() {
  const rss = () => Math.round(process.memoryUsage.rss() / 2 ** 20);
  const bare = rss();
  const { FirmQueue, silentLogger } = await import("../dist/index.js");
  const imported = rss();
  const url = process.env.FIRM_QUEUE_BENCH_URL;
  const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger, poolSize: concurrency + 2 });
  try {
    let done = 0;
    let allDone;
    const finished = new Promise((resolve) => (allDone = resolve));
    firm.defineJob("memory", () => {
      if (++done === jobs) allDone();
    });
    // Opens the pool and loads the driver (the schema is already there), as a worker's start does.
    await firm.migrate();
    // A forced collection (the child runs with --expose-gc): what is left is what the worker starts with.
    globalThis.gc();
    const connected = rss();
    let peak = connected;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
    const started = performance.now();
    const supervisor = await firm.start({
      workers: [{ queues: "*", concurrency, pollingInterval: 10 }],
      dispatchers: [],
    });
    await finished;
    const seconds = (performance.now() - started) / 1000;
    peak = Math.max(peak, rss());
    clearInterval(sampler);
    await supervisor.stop();
    const { getHeapSpaceStatistics } = await import("node:v8");
    const spaces = Object.fromEntries(
      getHeapSpaceStatistics()
        .filter((space) => ["new_space", "old_space", "code_space"].includes(space.space_name))
        .map((space) => [space.space_name.replace("_space", ""), Math.round(space.space_size / 2 ** 20)]),
    );
    console.log(JSON.stringify({ bare, imported, connected, peak, rate: Math.round(jobs / seconds), spaces }));
  } finally {
    await firm.close();
  }
}
