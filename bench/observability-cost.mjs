// npm run bench:observability -- [--database sqlite,postgres] [--jobs 3000] [--calls 200000] [--url URL]
//
// What job events, middleware and OpenTelemetry tracing cost per job when nobody listens, set
// beside what one job costs the database in the same run:
//   1. the no-listener code paths alone, timed over many calls in this process: the producer span
//      of an enqueue and the consumer span of an attempt (`@opentelemetry/api` installed, no SDK
//      registered), and the `has()` checks the emitting code makes before building an event;
//   2. one job enqueued one by one, and one job processed by an in-process worker (concurrency
//      10), on each database, as wall time per job.
// The overhead is then a share of a job's cost. A share far below the run-to-run spread of
// `npm run bench` (several per cent on this machine) cannot be measured there, which is the claim.
import { parseArgs } from "node:util";
import { FirmQueue, silentLogger } from "firm-queue";
import { JobEvents } from "../dist/job-events.js";
import { jobTracing } from "../dist/tracing.js";
import { benchDatabase } from "./databases.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "sqlite,postgres" },
    jobs: { type: "string", default: "3000" },
    calls: { type: "string", default: "200000" },
    url: { type: "string" },
  },
});
const calls = Number(values.calls);
const jobs = Number(values.jobs);

// Every event a job can meet on its way through enqueue, claim, run and finish (the emitting code
// checks `has(name)` once per job for each, at most).
const EVENT_CHECKS = ["job.enqueued", "job.dropped", "job.claimed", "job.started", "job.finished", "job.failed"];

if ((await jobTracing()) === null) throw new Error("@opentelemetry/api is not installed: run npm install first");

const events = new JobEvents(() => {});
process.stderr.write(`code paths: ${calls} calls each…\n`);
const paths = {
  // Each written as enqueue and the job runner call it: the cached loader is awaited every time.
  "producer span (enqueue)": await perCall(async () => {
    const span = (await jobTracing())?.startEnqueue([{ className: "noop", queueName: "default" }]);
    span?.end([1]);
  }),
  "consumer span (attempt), over a bare await": await overBare(async () => {
    const tracing = await jobTracing();
    return tracing?.runAttempt({ jobId: 1, name: "noop", queue: "default", attempt: 1, traceContext: null }, idle);
  }, idle),
  "event checks, no listener (6 per job)": await perCall(() => {
    for (const name of EVENT_CHECKS) if (events.has(name)) throw new Error("nobody listens in this benchmark");
  }),
};
const perJob = [];
for (const dialect of values.database.split(",").map((name) => name.trim())) {
  process.stderr.write(`${dialect}: preparing database…\n`);
  const database = await benchDatabase(dialect, values.url);
  try {
    perJob.push({ dialect, note: database.note, ...(await jobCosts(database.url)) });
  } finally {
    await database.cleanup();
  }
}

const enqueueOverhead = paths["producer span (enqueue)"] + paths["event checks, no listener (6 per job)"] / 3;
const runOverhead =
  paths["consumer span (attempt), over a bare await"] + (paths["event checks, no listener (6 per job)"] * 2) / 3;

console.log(`\nWhat observability costs with no listener, node ${process.version}\n`);
console.log("| code path | µs per call |");
console.log("|---|---:|");
for (const [name, micros] of Object.entries(paths)) console.log(`| ${name} | ${micros.toFixed(3)} |`);
console.log(
  `\n${jobs} jobs per database; overhead per job: enqueue ${enqueueOverhead.toFixed(3)} µs, run ${runOverhead.toFixed(3)} µs\n`,
);
console.log(
  "| database | enqueue one by one (µs per job) | overhead share | processing (µs per job, wall) | overhead share |",
);
console.log("|---|---:|---:|---:|---:|");
for (const r of perJob) {
  console.log(
    `| ${r.dialect} | ${r.enqueue.toFixed(1)} | ${percent(enqueueOverhead / r.enqueue)} | ${r.processing.toFixed(1)} | ${percent(runOverhead / r.processing)} |`,
  );
}
for (const r of perJob) console.log(`\n${r.dialect}: ${r.note}`);

/** Microseconds per call of `work`, best of five batches (warmed up first). */
async function perCall(work) {
  const batch = Math.max(1, Math.floor(calls / 5));
  for (let i = 0; i < batch; i++) await work();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let i = 0; i < batch; i++) await work();
    best = Math.min(best, ((performance.now() - started) * 1000) / batch);
  }
  return best;
}

/** Microseconds `work` adds to `bare`, each timed as {@link perCall} does. */
async function overBare(work, bare) {
  return Math.max(0, (await perCall(work)) - (await perCall(bare)));
}

async function idle() {}

/** Wall time per job of one-by-one enqueue and of processing, on the database at `url`. */
async function jobCosts(url) {
  const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger, poolSize: 12 });
  await firm.migrate();
  let done = 0;
  const noop = firm.defineJob("noop", async () => {
    done++;
  });
  try {
    let started = performance.now();
    for (let i = 0; i < jobs; i++) await noop.enqueue({ i });
    const enqueue = ((performance.now() - started) * 1000) / jobs;
    started = performance.now();
    const supervisor = await firm.start({ workers: [{ concurrency: 10, pollingInterval: 10 }], dispatchers: [] });
    while (done < jobs) await new Promise((resolve) => setTimeout(resolve, 5));
    const processing = ((performance.now() - started) * 1000) / jobs;
    await supervisor.stop();
    return { enqueue, processing };
  } finally {
    await firm.close();
  }
}

function percent(fraction) {
  return `${(fraction * 100).toFixed(2)}%`;
}
