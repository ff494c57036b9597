// npm run bench -- [--database sqlite,postgres,mysql] [--jobs 5000] [--concurrency 10] [--url URL]
//
// For each database: enqueue throughput (one by one, and in bulk), processing throughput of one
// in-process worker, and latency from enqueue to start while a worker is idle and waiting.
// Prints a table; every number comes from this run on this machine.
import { parseArgs } from "node:util";
import { FirmQueue, silentLogger } from "firm-queue";
import { benchDatabase } from "./databases.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "sqlite,postgres,mysql" },
    jobs: { type: "string", default: "5000" },
    concurrency: { type: "string", default: "10" },
    latency: { type: "string", default: "500" },
    url: { type: "string" },
  },
});
const dialects = values.database.split(",").map((name) => name.trim());
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);
const latencySamples = Number(values.latency);

const results = [];
for (const dialect of dialects) {
  process.stderr.write(`\n${dialect}: preparing database…\n`);
  const database = await benchDatabase(dialect, values.url);
  try {
    results.push({ dialect, note: database.note, ...(await measure(database.url)) });
  } finally {
    await database.cleanup();
  }
}

console.log(
  `\nfirm-queue benchmark: ${jobs} jobs, worker concurrency ${concurrency}, ${latencySamples} latency samples, node ${process.version}\n`,
);
console.log(
  "| database | enqueue one by one (jobs/s) | enqueueAll (jobs/s) | processing (jobs/s) | latency median (ms) | latency p99 (ms) |",
);
console.log("|---|---:|---:|---:|---:|---:|");
for (const r of results) {
  console.log(
    `| ${r.dialect} | ${r.enqueueOne.toFixed(0)} | ${r.enqueueBulk.toFixed(0)} | ${r.processing.toFixed(0)} | ${r.median.toFixed(1)} | ${r.p99.toFixed(1)} |`,
  );
}
for (const r of results) console.log(`\n${r.dialect}: ${r.note}`);

async function measure(url) {
  const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger, poolSize: concurrency + 2 });
  await firm.migrate();
  let done = 0;
  const latencies = [];
  // When each latency sample's enqueue call began, on this process's monotonic clock: the job's
  // created_at comes from the database's clock, whose measured offset is off by milliseconds on a
  // loaded machine, which is the size of what is measured here.
  const sentAt = [];
  let recordLatency = false;
  const noop = firm.defineJob("noop", async (args) => {
    if (recordLatency) latencies.push(performance.now() - sentAt[args.i]);
    done++;
  });
  try {
    const singles = Math.max(1, Math.floor(jobs / 5));
    progress("enqueue one by one", singles);
    let started = performance.now();
    for (let i = 0; i < singles; i++) await noop.enqueue({ i });
    const enqueueOne = singles / ((performance.now() - started) / 1000);

    progress("enqueueAll", jobs - singles);
    started = performance.now();
    const rest = Array.from({ length: jobs - singles }, (_, i) => ({ i }));
    for (let i = 0; i < rest.length; i += 1000) await noop.enqueueAll(rest.slice(i, i + 1000));
    const enqueueBulk = rest.length / ((performance.now() - started) / 1000);

    progress("processing", jobs);
    started = performance.now();
    const supervisor = await firm.start({ workers: [{ concurrency, pollingInterval: 10 }], dispatchers: [] });
    await until(() => done >= jobs);
    const processing = jobs / ((performance.now() - started) / 1000);

    progress("latency", latencySamples);
    recordLatency = true;
    // One job at a time, spaced out, so each measures a waiting worker picking up new work.
    for (let i = 0; i < latencySamples; i++) {
      sentAt[i] = performance.now();
      await noop.enqueue({ i });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await until(() => latencies.length >= latencySamples);
    await supervisor.stop();
    latencies.sort((a, b) => a - b);
    return {
      enqueueOne,
      enqueueBulk,
      processing,
      median: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
    };
  } finally {
    await firm.close();
  }
}

function percentile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

async function until(condition) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

function progress(phase, count) {
  process.stderr.write(`  ${phase}: ${count} jobs…\n`);
}
