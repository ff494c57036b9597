// node bench/rate-limit-beside-throttled.mjs [--database sqlite,postgres,mysql] [--waiting 200000]
//                                           [--jobs 20000] [--concurrency 24] [--rounds 4]
//                                           [--url …] [--mysql-url …]
//
// Whether jobs waiting for a budget slow down the jobs that have none: two databases per
// database kind, one holding `waiting` jobs of a job limited to 10 starts per second (throttled,
// waiting for their budget), one without them. Each round enqueues `jobs` unlimited no-op jobs
// into the same queue of each and times one in-process worker (which defines both jobs in both
// cases, so it runs its budget claim in both) draining them; the order alternates by round.
// Prints one JSON line per run and per database the ratio with/without, round by round.
import { parseArgs } from "node:util";
import { FirmQueue, silentLogger } from "firm-queue";
import { DurableServers, load, machineNote } from "./durable-servers.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "sqlite,postgres,mysql" },
    waiting: { type: "string", default: "200000" },
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    rounds: { type: "string", default: "4" },
    url: { type: "string" },
    "mysql-url": { type: "string" },
  },
});
const jobs = Number(values.jobs);
const waiting = Number(values.waiting);
const concurrency = Number(values.concurrency);

/** One database of the comparison, with or without the jobs waiting for budget. */
class Side {
  static async open(servers, dialect, waiting) {
    const database = await servers.fresh(dialect);
    const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
    await firm.migrate();
    const side = new Side(database, firm, waiting);
    const args = Array.from({ length: 1000 }, () => ({}));
    for (let i = 0; i < waiting; i += 1000) await side.metered.enqueueAll(args.slice(0, Math.min(1000, waiting - i)));
    return side;
  }

  constructor(database, firm, waiting) {
    this.database = database;
    this.firm = firm;
    this.waiting = waiting;
    this.done = 0;
    this.target = Number.POSITIVE_INFINITY;
    this.reached = () => {};
    this.noop = firm.defineJob("noop", async () => {
      if (++this.done === this.target) this.reached();
    });
    this.metered = firm.defineJob("metered", async () => {}, { rateLimit: { limit: 10, period: "1s" } });
  }

  /** Enqueue `jobs` unlimited jobs and time a worker draining them. */
  async drain() {
    const all = Array.from({ length: jobs }, (_, i) => ({ i }));
    for (let i = 0; i < all.length; i += 1000) await this.noop.enqueueAll(all.slice(i, i + 1000));
    this.done = 0;
    this.target = jobs;
    const finished = new Promise((resolve) => (this.reached = resolve));
    const loadBefore = load();
    const started = performance.now();
    const supervisor = await this.firm.start({ workers: [{ concurrency, pollingInterval: 10 }], dispatchers: [] });
    await finished;
    const seconds = (performance.now() - started) / 1000;
    await supervisor.stop();
    const throttled = (await this.firm.inspect.queues()).reduce((sum, queue) => sum + queue.throttled, 0);
    return { jobsPerSecond: Math.round(jobs / seconds), stillWaitingForBudget: throttled, load: [loadBefore, load()] };
  }

  async close() {
    await this.firm.close();
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
    const ratios = [];
    try {
      for (let round = 1; round <= Number(values.rounds); round++) {
        const order = round % 2 === 1 ? [without, beside] : [beside, without];
        const rate = {};
        for (const side of order) {
          const result = await side.drain();
          rate[side.waiting] = result.jobsPerSecond;
          console.log(JSON.stringify({ round, dialect, waitingForBudget: side.waiting, ...result }));
        }
        ratios.push(rate[waiting] / rate[0]);
      }
    } finally {
      await without.close();
      await beside.close();
    }
    table.push({ dialect, ratios });
  }
} finally {
  await servers.stop();
}
console.log(`\n| database | jobs/s beside ${waiting} waiting / without, per round | median |`);
console.log("|---|---|---:|");
for (const { dialect, ratios } of table) {
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = (sorted[Math.floor((sorted.length - 1) / 2)] + sorted[Math.ceil((sorted.length - 1) / 2)]) / 2;
  console.log(`| ${dialect} | ${ratios.map((ratio) => ratio.toFixed(3)).join(", ")} | ${median.toFixed(3)} |`);
}
