// npm run bench:wait -- [--samples 300] [--pause 10] [--durable] [--waiters 1]
//
// How long `waitFor` takes to resolve once its job is done, on PostgreSQL, where migration 011's
// trigger announces the end of an awaited job and the waiting instance's registry reads it at
// once. One FirmQueue runs a worker (woken by the ready-job LISTEN), another only enqueues and
// waits, as a web process would. Each sample, after a random pause of up to `pause` ms, enqueues
// one no-op job and waits for it; it times:
//   - handler returned → waitFor resolved: the whole path after the work, i.e. the worker's finish
//     commit, the notification, and the registry's query;
//   - notification heard → waitFor resolved: the registry's own part (a plain LISTEN client on the
//     same channel marks when the notification reached this process);
// and, as the floor in the same run, a one-row INSERT in autocommit (a round trip and a commit).
// With `--waiters N`, N - 1 other waits on jobs that never run stay pending during the samples,
// so the registry's query and bookkeeping carry them.
import { parseArgs } from "node:util";
import pg from "pg";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { FirmQueue, silentLogger } from "../dist/index.js";
import { sleep } from "./peers/clock.mjs";

const { values } = parseArgs({
  options: {
    samples: { type: "string", default: "300" },
    pause: { type: "string", default: "10" },
    durable: { type: "boolean", default: false },
    waiters: { type: "string", default: "1" },
  },
});
const samples = Number(values.samples);
const pauseMs = Number(values.pause);
const idleWaiters = Number(values.waiters) - 1;
if (!(samples > 0) || !(pauseMs >= 0) || !(idleWaiters >= 0)) throw new Error("bad --samples, --pause or --waiters");

const server = await startPostgres({ durable: values.durable });
const client = new pg.Client({ connectionString: server.url });
const listener = new pg.Client({ connectionString: server.url });
const worker = new FirmQueue({ databaseUrl: server.url, logger: silentLogger });
const waiter = new FirmQueue({ databaseUrl: server.url, logger: silentLogger });
const handlerEnd = new Map();
const heard = new Map();
let supervisor;
try {
  await client.connect();
  await listener.connect();
  await client.query("CREATE TABLE floor_rows (x int)");
  await worker.migrate();
  worker.defineJob("noop", (_args, context) => void handlerEnd.set(context.jobId, performance.now()));
  const noop = waiter.declareJob("noop");
  const parked = waiter.declareJob("parked", { queue: "parked" });
  listener.on("notification", (message) => heard.set(Number(message.payload), performance.now()));
  await listener.query("LISTEN firm_queue_job_ended");
  supervisor = await worker.start({ workers: [{ queues: "noop,default", concurrency: 4 }], dispatchers: [] });
  const pending = [];
  for (const result of await parked.enqueueAll([...Array(idleWaiters)].map(() => null))) {
    pending.push(waiter.waitFor(result.id).catch(() => undefined));
  }
  await sleep(500);
  // Warm up: connections, prepared statements, the LISTEN connections.
  for (let i = 0; i < 20; i++) await noop.enqueueAndWait(null);
  const total = [];
  const own = [];
  const floor = [];
  for (let i = 0; i < samples; i++) {
    await sleep(Math.random() * pauseMs);
    const { id } = await noop.enqueue(null);
    await waiter.waitFor(id);
    const resolved = performance.now();
    total.push(resolved - handlerEnd.get(id));
    if (heard.has(id)) own.push(resolved - heard.get(id));
    await sleep(Math.random() * pauseMs);
    const started = performance.now();
    await client.query({ name: "row", text: "INSERT INTO floor_rows VALUES (1)" });
    floor.push(performance.now() - started);
  }
  const stats = (times) => {
    const sorted = [...times].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))].toFixed(3);
    return `median ${at(0.5)}  p90 ${at(0.9)}  p99 ${at(0.99)}`;
  };
  console.log(
    `PostgreSQL, ${values.durable ? "durable (fsync, synchronous_commit on)" : "relaxed (fsync off)"}; ` +
      `${samples} samples after a random pause of up to ${pauseMs} ms, ${idleWaiters + 1} waiters; milliseconds`,
  );
  console.log(`  handler returned → waitFor resolved   ${stats(total)}`);
  console.log(`  notification heard → waitFor resolved ${stats(own)}  (${own.length} samples)`);
  console.log(`  floor: one-row INSERT, autocommit     ${stats(floor)}`);
  await waiter.close();
  await Promise.all(pending);
} finally {
  await supervisor?.stop();
  await client.end().catch(() => undefined);
  await listener.end().catch(() => undefined);
  await waiter.close();
  await worker.close();
  await server.stop();
}
