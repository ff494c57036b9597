// npm run bench:worker-memory -- [--jobs 20000] [--concurrency 24] [--rounds 1]
//                                 [--flags "|--max-semi-space-size=4|--max-semi-space-size=2"]
//
// Where a firm-queue worker's resident memory goes on PostgreSQL (durable commits), stage by
// stage, in a fresh process for each set of node flags (`--flags`: sets separated by `|`, the
// empty set meaning node's defaults):
//   - node alone, before anything is imported;
//   - after importing firm-queue (its modules and Kysely's);
//   - after `jobs` no-op jobs are enqueued (the pool open, the driver loaded) and a forced
//     collection has run; the schema is migrated by this script's own process beforehand, as a
//     worker of a deployed application finds it migrated;
//   - the largest resident set while one in-process worker (concurrency `concurrency`) drains them,
//     sampled every 20 ms as `bench:peers` does, with the rate;
//   - V8's heap spaces at the end of the run (what each space has reserved).
// The young generation ("new") is what V8 grows under a busy worker: compare its size across flags.
// The measuring process imports nothing at the top but node's argument parser, so that "node
// alone" is node alone; the parent's helpers are imported where the parent uses them.
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    rounds: { type: "string", default: "1" },
    flags: { type: "string", default: "|--max-semi-space-size=4|--max-semi-space-size=2" },
    child: { type: "boolean", default: false },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
if (!(jobs > 0) || !(concurrency > 0)) throw new Error("--jobs and --concurrency must be positive");

if (values.child) await measure();
else await compare();

/** Starts the server, then one child per flag set and round, and prints a table. */
async function compare() {
  const { spawnSync } = await import("node:child_process");
  const { fileURLToPath } = await import("node:url");
  const { startPostgres } = await import("../scripts/servers/postgres.mjs");
  const flagSets = values.flags.split("|").map((set) => set.trim());
  const server = await startPostgres({ durable: true });
  try {
    console.log(
      `firm-queue worker memory (MB), ${jobs} no-op jobs, concurrency ${concurrency}, durable PostgreSQL; ` +
        "rss at each stage, heap spaces reserved at the end",
    );
    console.log(
      "flags | rounds: node alone, imported, enqueued, peak while running, rate (jobs/s) | new, old, code spaces",
    );
    for (let round = 1; round <= Number(values.rounds); round++) {
      for (const flags of flagSets) {
        const database = await migratedDatabase(server.url);
        const script = fileURLToPath(import.meta.url);
        const args = ["--expose-gc", ...flags.split(/\s+/).filter(Boolean), script, "--child", "--jobs", `${jobs}`];
        const child = spawnSync(process.execPath, [...args, "--concurrency", `${concurrency}`], {
          env: { ...process.env, FIRM_QUEUE_BENCH_URL: database.url },
          encoding: "utf8",
        });
        await database.cleanup();
        if (child.status !== 0) throw new Error(`the measuring process failed:\n${child.stderr}`);
        const r = JSON.parse(child.stdout.trim().split("\n").at(-1));
        console.log(
          `${flags || "(defaults)"} | round ${round}: ${r.bare}, ${r.imported}, ${r.enqueued}, ${r.peak}, ${r.rate} | ` +
            `${r.spaces.new}, ${r.spaces.old}, ${r.spaces.code}`,
        );
      }
    }
  } finally {
    await server.stop();
  }
}

/** A fresh database on the server, with firm-queue's schema. */
async function migratedDatabase(adminUrl) {
  const { FirmQueue, silentLogger } = await import("../dist/index.js");
  const { benchDatabase } = await import("./databases.mjs");
  const database = await benchDatabase("postgres", adminUrl);
  const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger });
  try {
    await firm.migrate();
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
    const job = firm.defineJob("memory", () => {
      if (++done === jobs) allDone();
    });
    for (let start = 0; start < jobs; start += 1000) {
      await job.enqueueAll(Array.from({ length: Math.min(1000, jobs - start) }, (_, n) => ({ n: start + n })));
    }
    // A forced collection (the child runs with --expose-gc): the garbage of enqueueing is not the worker's.
    globalThis.gc();
    const enqueued = rss();
    let peak = enqueued;
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
    console.log(JSON.stringify({ bare, imported, enqueued, peak, rate: Math.round(jobs / seconds), spaces }));
  } finally {
    await firm.close();
  }
}
