// npm run bench:latency-floor -- [--samples 300] [--pause 10] [--durable]
//
// The floor under the enqueue → start latency on PostgreSQL, piece by piece. A job enqueued on an
// idle worker starts after two commits in a row, the enqueue's and the claim's, each a round trip
// from a process that was idle a moment before (the latency samples of `bench:peers` are spaced by
// random pauses, as real traffic is). This times, after the same kind of pause (random, up to
// `pause` ms), the round trips those two steps cannot go below and firm-queue's own:
//   - `SELECT 1`: the round trip alone;
//   - a one-row INSERT in autocommit (named): a round trip and a commit, the least a durable
//     enqueue or claim can cost;
//   - the same INSERT with `synchronous_commit` off for its own transaction (`set_config(…, true)`
//     inside the statement): what a commit costs when it does not wait for the WAL flush, i.e. what
//     a claim would cost if it gave up surviving a server crash (docs/benchmarks.md, "Hot path,
//     seventh pass", says why firm-queue's does not);
//   - firm-queue's enqueue of one job, and its claim of one job.
// Prints the median and 90th percentile of each, and each one's server-side execution time from
// pg_stat_statements.
import { parseArgs } from "node:util";
import pg from "pg";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { FirmQueue, silentLogger } from "../dist/index.js";
import { registerProcess } from "../dist/models/process.js";
import { claimJobs } from "../dist/roles/claims.js";
import { QueueSelector } from "../dist/roles/queue-selector.js";
import { sleep } from "./peers/clock.mjs";

const { values } = parseArgs({
  options: {
    samples: { type: "string", default: "300" },
    pause: { type: "string", default: "10" },
    durable: { type: "boolean", default: false },
  },
});
const samples = Number(values.samples);
const pauseMs = Number(values.pause);
if (!(samples > 0) || !(pauseMs >= 0)) throw new Error("--samples must be positive and --pause at least 0");
const server = await startPostgres({
  durable: values.durable,
  settings: { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "all" },
});
const client = new pg.Client({ connectionString: server.url });
const firm = new FirmQueue({ databaseUrl: server.url, logger: silentLogger, poolSize: 2 });
try {
  await client.connect();
  await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  await client.query("CREATE TABLE floor_rows (x int)");
  await firm.migrate();
  // The enqueue step's jobs go to a queue the claim step does not claim from.
  const enqueued = firm.defineJob("enqueued", () => undefined, { queue: "enqueued" });
  const claimed = firm.defineJob("claimed", () => undefined, { queue: "claimed" });
  const database = await firm.database();
  const processId = await registerProcess(database.db, { kind: "Worker", name: "floor" }, new Date());
  const selector = new QueueSelector("claimed");
  const claimOne = async () => {
    const jobs = await claimJobs(database, selector, 24, processId);
    if (jobs.length !== 1) throw new Error(`claimed ${jobs.length} jobs, expected 1`);
  };
  const steps = [
    ["SELECT 1", () => client.query({ name: "one", text: "SELECT 1" })],
    ["one-row INSERT, autocommit", () => client.query({ name: "row", text: "INSERT INTO floor_rows VALUES (1)" })],
    [
      "the same, not waiting for flush",
      () =>
        client.query({
          name: "row-async",
          text: "INSERT INTO floor_rows SELECT 1 FROM (SELECT set_config('synchronous_commit', 'off', true)) s",
        }),
    ],
    ["firm-queue: enqueue one job", () => enqueued.enqueue(null)],
    ["firm-queue: claim one job", claimOne, () => claimed.enqueue(null)],
  ];
  await client.query("SELECT pg_stat_statements_reset()");
  console.log(
    `PostgreSQL, ${values.durable ? "durable (fsync, synchronous_commit on)" : "relaxed (fsync off)"}; ` +
      `${samples} samples each, after a random pause of up to ${pauseMs} ms; milliseconds`,
  );
  const medians = {};
  for (const [label, step, prepare] of steps) {
    const times = [];
    for (let i = 0; i < samples; i++) {
      await prepare?.();
      await sleep(Math.random() * pauseMs);
      const started = performance.now();
      await step();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    medians[label] = times[Math.floor(samples / 2)];
    console.log(
      `  ${label.padEnd(32)} median ${medians[label].toFixed(3)}  p90 ${times[Math.floor(samples * 0.9)].toFixed(3)}`,
    );
  }
  const { rows } = await client.query(
    `SELECT calls, mean_exec_time, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS query
     FROM pg_stat_statements WHERE calls >= $1 ORDER BY mean_exec_time DESC LIMIT 5`,
    [samples],
  );
  console.log("  server-side execution, mean (pg_stat_statements):");
  for (const row of rows) console.log(`    ${Number(row.mean_exec_time).toFixed(3)}  ${row.calls} calls  ${row.query}`);
  const insert = medians["one-row INSERT, autocommit"];
  console.log(
    `  two commits in a row cannot take less than about ${(2 * insert).toFixed(2)} ms here; ` +
      `firm-queue's enqueue and claim take ${(medians["firm-queue: enqueue one job"] + medians["firm-queue: claim one job"]).toFixed(2)} ms`,
  );
} finally {
  await client.end().catch(() => undefined);
  await firm.close();
  await server.stop();
}
