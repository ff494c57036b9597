// node bench/rate-limit-beside-throttled.mjs [--database sqlite,postgres,mysql] [--waiting 200000]
//                                           [--jobs 20000] [--concurrency 24] [--rounds 4]
//                                           [--lib a/dist/index.js,b/dist/index.js]
//                                           [--url …] [--mysql-url …]
//
// Whether jobs waiting for a budget slow down the jobs that have none: two databases per
// database kind, one holding `waiting` jobs of a job limited to 10 starts per second (throttled,
// waiting for their budget), one without them. Each round enqueues `jobs` unlimited no-op jobs
// into the same queue of each and times one in-process worker (which defines both jobs in both
// cases, so it runs its budget claim in both) draining them; the order alternates by round.
// Prints one JSON line per run and per database the ratio with/without, round by round. With
// several `--lib` builds (e.g. a copy of the branch point and this checkout), both databases are
// shared by the builds (their schemas must match) and each round runs every build, in an order
// that alternates by round: a same-run A/B of the ratio.
import { parseArgs } from "node:util";
import { DurableServers, load, machineNote } from "./durable-servers.mjs";
import { importBuild } from "./noop-backlog.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "sqlite,postgres,mysql" },
    waiting: { type: "string", default: "200000" },
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    rounds: { type: "string", default: "4" },
    url: { type: "string" },
    "mysql-url": { type: "string" },
    lib: { type: "string", default: "firm-queue" },
  },
});
const jobs = Number(values.jobs);
const waiting = Number(values.waiting);
const concurrency = Number(values.concurrency);
const libs = values.lib.split(",");
const builds = await Promise.all(libs.map((lib) => importBuild(lib)));

/** One database of the comparison, with or without the jobs waiting for budget. */
class Side {
  static async open(servers, dialect, waiting) {
    const database = await servers.fresh(dialect);
    const side = new Side(database, waiting);
    await side.firms[0].firm.migrate();
    const args = Array.from({ length: 1000 }, () => ({}));
    const { metered } = side.firms[0];
    for (let i = 0; i < waiting; i += 1000) await metered.enqueueAll(args.slice(0, Math.min(1000, waiting - i)));
    return side;
  }

  constructor(database, waiting) {
    this.database = database;
    this.waiting = waiting;
    this.done = 0;
    this.target = Number.POSITIVE_INFINITY;
    this.reached = () => {};
    // One client per build, on the same database.
    this.firms = builds.map(({ FirmQueue, silentLogger }) => {
      const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
      const noop = firm.defineJob("noop", async () => {
        if (++this.done === this.target) this.reached();
      });
      const metered = firm.defineJob("metered", async () => {}, { rateLimit: { limit: 10, period: "1s" } });
      return { firm, noop, metered };
    });
  }

  /** Enqueue `jobs` unlimited jobs and time a worker of build `build` draining them. */
  async drain(build) {
    const { firm, noop } = this.firms[build];
    const all = Array.from({ length: jobs }, (_, i) => ({ i }));
    for (let i = 0; i < all.length; i += 1000) await noop.enqueueAll(all.slice(i, i + 1000));
    this.done = 0;
    this.target = jobs;
    const finished = new Promise((resolve) => (this.reached = resolve));
    const loadBefore = load();
    const started = performance.now();
    const supervisor = await firm.start({ workers: [{ concurrency, pollingInterval: 10 }], dispatchers: [] });
    await finished;
    const seconds = (performance.now() - started) / 1000;
    await supervisor.stop();
    const throttled = (await firm.inspect.queues()).reduce((sum, queue) => sum + queue.throttled, 0);
    return { jobsPerSecond: Math.round(jobs / seconds), stillWaitingForBudget: throttled, load: [loadBefore, load()] };
  }

  async close() {
    for (const { firm } of this.firms) await firm.close();
    await this.database.cleanup();
  }
}

const servers = new DurableServers({ postgresUrl: values.url, mysqlUrl: values["mysql-url"] });
console.log(
  `# ${machineNote()}; ${jobs} unlimited no-op jobs per run, concurrency ${concurrency}, beside ${waiting} jobs waiting for a budget of 10 per second in the same queue, or none`,
);
const table = [];
try {
  for (const dialect of values.database.split(",")) {
    const without = await Side.open(servers, dialect, 0);
    const beside = await Side.open(servers, dialect, waiting);
    const ratios = libs.map(() => []);
    try {
      for (let round = 1; round <= Number(values.rounds); round++) {
        const buildOrder = libs.map((_, build) => build);
        if (round % 2 === 0) buildOrder.reverse();
        for (const build of buildOrder) {
          const order = round % 2 === 1 ? [without, beside] : [beside, without];
          const rate = {};
          for (const side of order) {
            const result = await side.drain(build);
            rate[side.waiting] = result.jobsPerSecond;
            console.log(
              JSON.stringify({ round, dialect, lib: libs[build], waitingForBudget: side.waiting, ...result }),
            );
          }
          ratios[build].push(rate[waiting] / rate[0]);
        }
      }
    } finally {
      await without.close();
      await beside.close();
    }
    for (const [build, lib] of libs.entries()) table.push({ dialect, lib, ratios: ratios[build] });
  }
} finally {
  await servers.stop();
}
console.log(`\n| database | build | jobs/s beside ${waiting} waiting / without, per round | median |`);
console.log("|---|---|---|---:|");
for (const { dialect, lib, ratios } of table) {
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = (sorted[Math.floor((sorted.length - 1) / 2)] + sorted[Math.ceil((sorted.length - 1) / 2)]) / 2;
  console.log(`| ${dialect} | ${lib} | ${ratios.map((ratio) => ratio.toFixed(3)).join(", ")} | ${median.toFixed(3)} |`);
}
