// node bench/rate-limit-budget.mjs [--database sqlite,postgres,mysql] [--limit 1000]
//                                  [--seconds 15] [--warmup 3] [--processes 2] [--concurrency 50]
//                                  [--url …] [--mysql-url …]
//
// How close a budget is reached: a no-op job with `rateLimit: { limit, period: "1s" }`, a
// backlog of more of them than the run can start, and a fork-mode supervisor whose worker runs
// `processes` processes (bench/rate-limit-jobs.mjs). After `warmup` seconds from the first
// start, the run counts the jobs that left the budget's waiting list in the next `seconds`
// seconds (firm.inspect.queues(), read at both ends) and prints starts per second and its ratio
// to the limit. Then, on another fresh database, the same processes run a backlog of the same job
// without the limit, counted from its first start until the backlog is empty: what the machine can
// start at all (a budget above that cannot be reached, and a shared machine's load moves it).
import { parseArgs } from "node:util";
import { FirmQueue, silentLogger } from "firm-queue";
import { DurableServers, load, machineNote } from "./durable-servers.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "sqlite,postgres,mysql" },
    limit: { type: "string", default: "1000" },
    seconds: { type: "string", default: "15" },
    warmup: { type: "string", default: "3" },
    processes: { type: "string", default: "2" },
    concurrency: { type: "string", default: "50" },
    url: { type: "string" },
    "mysql-url": { type: "string" },
  },
});
const limit = Number(values.limit);
const seconds = Number(values.seconds);
const warmup = Number(values.warmup);
process.env.BENCH_RATE_LIMIT = String(limit);
const { defineMetered } = await import("./rate-limit-jobs.mjs");

const servers = new DurableServers({ postgresUrl: values.url, mysqlUrl: values["mysql-url"] });
console.log(
  `# ${machineNote()}; budget ${limit} starts per 1 s, ${values.processes} worker processes of ${values.concurrency} slots, counted over ${seconds} s after ${warmup} s`,
);
try {
  for (const dialect of values.database.split(",")) {
    for (const limited of [true, false]) {
      const database = await servers.fresh(dialect);
      try {
        const result = await measure(database.url, limited);
        const ratio = limited ? { ratio: Number((result.startsPerSecond / limit).toFixed(4)) } : {};
        console.log(JSON.stringify({ dialect, job: limited ? "metered" : "unmetered", ...result, ...ratio }));
      } finally {
        await database.cleanup();
      }
    }
  }
} finally {
  await servers.stop();
}

/** Count the starts of a backlog of "metered" jobs (`limited`) or "unmetered" ones. */
async function measure(url, limited) {
  const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger });
  await firm.migrate();
  const { metered, unmetered } = defineMetered(firm);
  const job = limited ? metered : unmetered;
  // Enough that the budget, not the backlog, is what runs out: the whole run at the limit and more.
  const backlog = Math.ceil(limit * (warmup + seconds + 5) * 1.1);
  const args = Array.from({ length: 1000 }, () => null);
  for (let i = 0; i < backlog; i += 1000) await job.enqueueAll(args);
  const loadBefore = load();
  const supervisor = await firm.start({
    mode: "fork",
    require: ["bench/rate-limit-jobs.mjs"],
    workers: [{ processes: Number(values.processes), concurrency: Number(values.concurrency), pollingInterval: 10 }],
    dispatchers: [],
  });
  // Jobs started so far: the backlog less those still waiting for the budget (a no-op job's
  // start and end are a few ms apart, so a start is counted when it leaves the throttled table).
  const waiting = async () =>
    (await firm.inspect.queues()).reduce((sum, queue) => sum + (limited ? queue.throttled : queue.ready), 0);
  try {
    await until(async () => (await waiting()) < backlog);
    // Without the limit, from the first start: a quiet machine runs the whole backlog within the warm-up.
    if (limited) await new Promise((resolve) => setTimeout(resolve, warmup * 1000));
    const before = await waiting();
    const from = performance.now();
    // Without the limit the backlog runs out sooner: counted until it has.
    if (limited) await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    else await until(async () => (await waiting()) === 0);
    const after = await waiting();
    const elapsed = (performance.now() - from) / 1000;
    if (limited && after === 0) throw new Error("the backlog ran out before the count ended: use a larger one");
    return {
      startsPerSecond: Math.round(((before - after) / elapsed) * 10) / 10,
      started: before - after,
      seconds: Number(elapsed.toFixed(3)),
      load: [loadBefore, load()],
    };
  } finally {
    await supervisor.stop();
    await firm.close();
  }
}

/** Poll `check` every 100 ms until it returns something other than null/undefined/false. */
async function until(check) {
  for (;;) {
    const value = await check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
