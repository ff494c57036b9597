// node bench/rate-limit-hot-path.mjs --lib <old>/dist/index.js,dist/index.js
//                                    [--database sqlite,postgres,mysql] [--jobs 20000]
//                                    [--concurrency 24] [--rounds 4] [--url …] [--mysql-url …]
//
// What rate limits cost a worker that has none: one in-process worker drains `jobs` no-op jobs
// (no rate limit defined anywhere) with each build given to --lib, e.g. a copy of the commit
// before rate limits and this checkout, on each database (durable servers). Each round runs every
// build once per database, alternating the order (even rounds reversed: the first run of a pair
// tends to be slower), each on a fresh database of the same server. Prints one JSON line per run,
// then per database the ratio of the last build's jobs/s to the first's, round by round.
import { parseArgs } from "node:util";
import { DurableServers, load, machineNote } from "./durable-servers.mjs";
import { noopBacklogOn } from "./noop-backlog.mjs";

const { values } = parseArgs({
  options: {
    lib: { type: "string", default: "firm-queue" },
    database: { type: "string", default: "sqlite,postgres,mysql" },
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    rounds: { type: "string", default: "4" },
    url: { type: "string" },
    "mysql-url": { type: "string" },
  },
});
const libs = values.lib.split(",");
const dialects = values.database.split(",");
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);

const servers = new DurableServers({ postgresUrl: values.url, mysqlUrl: values["mysql-url"] });
/** @type {Record<string, Record<string, number>[]>} jobs/s by database, then round, then build */
const rates = {};
console.log(`# ${machineNote()}; ${jobs} no-op jobs, concurrency ${concurrency}, no rate limit defined`);
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const dialect of dialects) {
      const order = round % 2 === 0 ? [...libs].reverse() : libs;
      for (const lib of order) {
        const result = await drain(lib, dialect);
        console.log(JSON.stringify({ round, dialect, lib, ...result }));
        ((rates[dialect] ??= [])[round - 1] ??= {})[lib] = result.jobsPerSecond;
      }
    }
  }
} finally {
  await servers.stop();
}
if (libs.length > 1) {
  const [first, last] = [libs[0], libs.at(-1)];
  console.log(`\n| database | ${last} / ${first}, jobs/s ratio per round | median |`);
  console.log("|---|---|---:|");
  for (const dialect of dialects) {
    const ratios = rates[dialect].map((round) => round[last] / round[first]);
    const sorted = [...ratios].sort((a, b) => a - b);
    const median = (sorted[Math.floor((sorted.length - 1) / 2)] + sorted[Math.ceil((sorted.length - 1) / 2)]) / 2;
    console.log(`| ${dialect} | ${ratios.map((ratio) => ratio.toFixed(3)).join(", ")} | ${median.toFixed(3)} |`);
  }
}

/** One drain of the backlog with build `lib` on a fresh database. */
async function drain(lib, dialect) {
  const database = await servers.fresh(dialect);
  try {
    const { firm, finished } = await noopBacklogOn(lib, database.url, { jobs, concurrency });
    const loadBefore = load();
    const started = performance.now();
    const supervisor = await firm.start({ workers: [{ concurrency, pollingInterval: 10 }], dispatchers: [] });
    await finished;
    const seconds = (performance.now() - started) / 1000;
    await supervisor.stop();
    await firm.close();
    return { jobsPerSecond: Math.round(jobs / seconds), load: [loadBefore, load()] };
  } finally {
    await database.cleanup();
  }
}
