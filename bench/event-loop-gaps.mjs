// node bench/event-loop-gaps.mjs [--database sqlite,postgres,mysql] [--jobs 40000] [--concurrency 24]
//                                [--prefetch N] [--rounds 1] [--lib a/dist/index.js,b/dist/index.js]
//                                [--url …] [--mysql-url …]
//
// How long a worker draining a backlog keeps its process's event loop from anything else: one
// in-process worker drains `jobs` no-op jobs (durable servers) while a 5 ms interval timer, as a
// heartbeat or a web server beside it would, notes how late each of its ticks comes. Prints per
// run the rate, the ticks and the longest gap between two ticks. Where the database calls are
// synchronous (SQLite), that gap is the longest stretch the worker ran without yielding.
import { parseArgs } from "node:util";
import { DurableServers, machineNote } from "./durable-servers.mjs";
import { noopBacklogOn } from "./noop-backlog.mjs";

const { values } = parseArgs({
  options: {
    lib: { type: "string", default: "firm-queue" },
    database: { type: "string", default: "sqlite,postgres,mysql" },
    jobs: { type: "string", default: "40000" },
    concurrency: { type: "string", default: "24" },
    prefetch: { type: "string" },
    rounds: { type: "string", default: "1" },
    url: { type: "string" },
    "mysql-url": { type: "string" },
  },
});
const TICK_MS = 5;
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
const prefetch = values.prefetch === undefined ? {} : { prefetch: Number(values.prefetch) };

const servers = new DurableServers({ postgresUrl: values.url, mysqlUrl: values["mysql-url"] });
console.log(
  `# ${machineNote()}; ${jobs} no-op jobs, concurrency ${concurrency}, prefetch ${values.prefetch ?? "default"}, a ${TICK_MS} ms interval beside the worker`,
);
try {
  for (let round = 1; round <= Number(values.rounds); round++)
    for (const dialect of values.database.split(","))
      for (const lib of values.lib.split(","))
        console.log(JSON.stringify({ round, dialect, lib, ...(await drain(lib, dialect)) }));
} finally {
  await servers.stop();
}

/** One drain with build `lib` on a fresh database, with the interval's ticks noted. */
async function drain(lib, dialect) {
  const database = await servers.fresh(dialect);
  try {
    const { firm, finished } = await noopBacklogOn(lib, database.url, { jobs, concurrency });
    let last = performance.now();
    let longestGap = 0;
    let ticks = 0;
    const interval = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, TICK_MS);
    const started = performance.now();
    const supervisor = await firm.start({
      workers: [{ concurrency, pollingInterval: 10, ...prefetch }],
      dispatchers: [],
    });
    await finished;
    const ms = performance.now() - started;
    clearInterval(interval);
    longestGap = Math.max(longestGap, performance.now() - last);
    await supervisor.stop();
    await firm.close();
    return {
      jobsPerSecond: Math.round((jobs * 1000) / ms),
      drainMs: Math.round(ms),
      ticks,
      longestGapMs: Math.round(longestGap),
    };
  } finally {
    await database.cleanup();
  }
}
