// node bench/workflows.mjs [--database sqlite,postgres,mysql] [--jobs 10000] [--concurrency 24]
//                          [--rounds 3] [--warmup 1] [--lib a/dist/index.js,b/dist/index.js]
//                          [--url …] [--mysql-url …]
//
// What a workflow costs per job against plain jobs: on each database (durable servers), each round
// times one in-process worker running, on a fresh database each, `jobs` plain no-op jobs
// (enqueueAll), a flow of one parent over `jobs` no-op children (firm.flow), and a batch of `jobs`
// no-op jobs with an onFinish callback (firm.batch), in an order that rotates by round. The rate
// is the jobs run (the parent and the callback included) per second from the worker's start to
// the last one's finish recorded (its job.finished event); the enqueue is timed apart. Prints one
// JSON line per run, then per database the flow's and the batch's rate against the plain jobs' of
// the same round, and their medians. On
// PostgreSQL each run also counts its database's commits per 1,000 jobs while the worker ran
// (what durable commits cost). Each run reports the CPU time per 1,000 jobs of the worker's
// process and, on PostgreSQL and MariaDB, of the database server (all its processes, from /proc):
// less sensitive than the rate to other work on the machine.
//
// The enqueue's garbage is collected before the worker starts (see collectGarbage below).
//
// Each run lasts well under a second, so the first runs of a process (code not yet optimised by
// the JIT) would be slow for whichever kind comes first: `warmup` rounds per database (and build)
// run before the measured ones, printed with `"warmup":true` and left out of the ratios. With
// `--lib`, every round runs each build (`firm-queue` as installed, or a path to a build's
// dist/index.js, e.g. a copy of the branch point), alternating which goes first, on the same
// servers: a same-run A/B.
import { parseArgs } from "node:util";
import v8 from "node:v8";
import vm from "node:vm";
import pg from "pg";
import { DurableServers, load, machineNote } from "./durable-servers.mjs";
import { importBuild } from "./noop-backlog.mjs";
import { serverCpuMs } from "./server-cpu.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "sqlite,postgres,mysql" },
    jobs: { type: "string", default: "10000" },
    concurrency: { type: "string", default: "24" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "1" },
    lib: { type: "string", default: "firm-queue" },
    url: { type: "string" },
    "mysql-url": { type: "string" },
  },
});
const jobs = Number(values.jobs);
// The enqueue and the worker share this process, where an application's enqueuers and workers
// are usually apart: the enqueue's garbage (a flow's tree, the rows sent) is collected before the
// worker starts, so no run pays for its own enqueue's collection in its processing rate.
v8.setFlagsFromString("--expose-gc");
const collectGarbage = vm.runInNewContext("gc");
const concurrency = Number(values.concurrency);
const KINDS = ["plain", "flow", "batch"];

const servers = new DurableServers({ postgresUrl: values.url, mysqlUrl: values["mysql-url"] });
console.log(
  `# ${machineNote()}; ${jobs} jobs per run (and a flow's parent, a batch's callback), concurrency ${concurrency}`,
);
const libs = values.lib.split(",");
const warmup = Number(values.warmup);
const ratios = {};
try {
  for (const dialect of values.database.split(","))
    for (let round = 1; round <= warmup; round++)
      for (const lib of libs)
        for (const kind of KINDS) {
          const result = await run(lib, dialect, kind);
          console.log(JSON.stringify({ warmup: true, round, ...libField(lib), dialect, kind, ...result }));
        }
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const dialect of values.database.split(",")) {
      const shift = (round - 1) % KINDS.length;
      const order = [...KINDS.slice(shift), ...KINDS.slice(0, shift)];
      for (const lib of round % 2 === 0 ? [...libs].reverse() : libs) {
        const rate = {};
        for (const kind of order) {
          const result = await run(lib, dialect, kind);
          rate[kind] = result.jobsPerSecond;
          console.log(JSON.stringify({ round, ...libField(lib), dialect, kind, ...result }));
        }
        const key = libs.length > 1 ? `${lib} ${dialect}` : dialect;
        for (const kind of ["flow", "batch"]) ((ratios[key] ??= {})[kind] ??= []).push(rate[kind] / rate.plain);
      }
    }
  }
} finally {
  await servers.stop();
}
console.log("\n| database | flow / plain, per round | median | batch / plain, per round | median |");
console.log("|---|---|---|---|---|");
for (const [key, { flow, batch }] of Object.entries(ratios)) {
  const list = (ratios) => ratios.map((ratio) => ratio.toFixed(3)).join(", ");
  console.log(`| ${key} | ${list(flow)} | ${median(flow).toFixed(3)} | ${list(batch)} | ${median(batch).toFixed(3)} |`);
}

function libField(lib) {
  return libs.length > 1 ? { lib } : {};
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Enqueue one kind of work on a fresh database and time a worker running all of it. */
async function run(lib, dialect, kind) {
  const { FirmQueue, silentLogger } = await importBuild(lib);
  const database = await servers.fresh(dialect);
  const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
  let closed = false;
  try {
    await firm.migrate();
    let done = 0;
    let reached;
    const finished = new Promise((resolve) => (reached = resolve));
    const total = kind === "plain" ? jobs : jobs + 1;
    // A job is done once its finish is recorded (committed), not when its handler returns: a
    // flow's parent can only start after its children's finishes, so counting handlers would
    // leave the plain run's last commit out of its time and keep the flow's in.
    const stopCounting = firm.events.on("job.finished", () => {
      if (++done === total) reached();
    });
    const noop = firm.defineJob("noop", async () => {});
    firm.defineJob("parent", async () => {});
    firm.defineJob("callback", async () => {});
    const enqueueStarted = performance.now();
    const args = Array.from({ length: jobs }, (_, i) => ({ i }));
    if (kind === "plain") {
      for (let i = 0; i < jobs; i += 1000) await noop.enqueueAll(args.slice(i, i + 1000));
    } else if (kind === "flow") {
      await firm.flow({ name: "parent", args: {}, children: args.map((a) => ({ name: "noop", args: a })) });
    } else {
      await firm.batch(
        args.map((a) => ({ name: "noop", args: a })),
        { onFinish: { name: "callback", args: {} } },
      );
    }
    const enqueueSeconds = (performance.now() - enqueueStarted) / 1000;
    const commits = dialect === "postgres" ? await commitCounter(database.url) : undefined;
    collectGarbage();
    const commitsBefore = await commits?.read();
    const loadBefore = load();
    const serverCpuBefore = serverCpuMs(database.url);
    const workerCpuBefore = process.cpuUsage();
    const started = performance.now();
    const supervisor = await firm.start({
      workers: [{ concurrency, pollingInterval: 10 }],
      dispatchers: [{ pollingInterval: 100 }],
    });
    await finished;
    stopCounting();
    const seconds = (performance.now() - started) / 1000;
    const workerCpu = process.cpuUsage(workerCpuBefore);
    const serverCpu = serverCpuMs(database.url) - serverCpuBefore;
    await supervisor.stop();
    // Each backend reports its commits at most once a second, and at exit: closed, then read.
    await firm.close();
    closed = true;
    if (commits) await new Promise((resolve) => setTimeout(resolve, 1500));
    const commitsPer1000 =
      commits === undefined ? undefined : Math.round((((await commits.read()) - commitsBefore) * 1000) / total);
    await commits?.close();
    return {
      jobsPerSecond: Math.round(total / seconds),
      workerCpuMsPer1000: Number((((workerCpu.user + workerCpu.system) / 1000) * (1000 / total)).toFixed(1)),
      ...(dialect === "sqlite" ? {} : { serverCpuMsPer1000: Number(((serverCpu * 1000) / total).toFixed(1)) }),
      commitsPer1000,
      enqueueSeconds: Number(enqueueSeconds.toFixed(2)),
      load: [loadBefore, load()],
    };
  } finally {
    if (!closed) await firm.close();
    await database.cleanup();
  }
}

/** The commits of a PostgreSQL database so far (statistics flushed first, so they are current). */
async function commitCounter(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    read: async () => {
      await client.query("SELECT pg_stat_force_next_flush()").catch(() => undefined);
      const { rows } = await client.query(
        "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
      );
      return Number(rows[0].xact_commit);
    },
    close: () => client.end(),
  };
}
