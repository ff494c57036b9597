// pg-boss: PostgreSQL-only, polling workers (no LISTEN/NOTIFY in the versions that run on Node 20).
// A pg-boss worker (one work() call) fetches up to `batchSize` jobs, runs the handler on all of
// them, and then waits out its polling interval, even after a fetch that found jobs. So its
// throughput is at most (work() calls × batchSize) per polling interval. Two variants: one job
// per fetch with `concurrency` workers (today's setting), and at its best on a backlog, with large
// batches (below).
import { importPeer, installedVersion } from "./adapter.mjs";

/** pg-boss refuses a polling interval under half a second. */
const MIN_POLLING_MS = 500;

/**
 * The batched variant: BATCHED_WORKERS work() calls of BATCH_SIZE jobs each. Of the two
 * configurations tried (one work() call with batchSize 500, and four), four was the faster: with
 * one, the half-second wait after each fetch caps the rate at about 1000 jobs/s.
 */
const BATCH_SIZE = 500;
const BATCHED_WORKERS = 4;

/**
 * @param {{ batched: boolean }} variant
 * @returns {import("./adapter.mjs").PeerAdapter}
 */
export function pgBossAdapter({ batched }) {
  return {
    id: batched ? "pg-boss-batched" : "pg-boss",
    label: `pg-boss${batched ? " batched" : ""} (PostgreSQL)`,
    server: "postgres",
    packageName: "pg-boss",
    async open({ url, concurrency, pollingInterval, queues, attach }) {
      const { default: PgBoss } = await importPeer("pg-boss");
      const pollingMs = Math.max(pollingInterval, MIN_POLLING_MS);
      const workers = batched ? BATCHED_WORKERS : concurrency;
      const batchSize = batched ? BATCH_SIZE : 1;
      // No cron scheduling and no maintenance loop: the benchmark measures the job path only,
      // as firm-queue runs without its dispatcher.
      const boss = new PgBoss({ connectionString: url, max: concurrency + 2, schedule: false, supervise: false });
      /** @type {unknown[]} */
      const errors = [];
      boss.on("error", (error) => errors.push(error));
      await boss.start();
      try {
        if (!attach) for (const queue of queues) await boss.createQueue(queue);
      } catch (error) {
        await boss.stop({ graceful: false, wait: true });
        throw error;
      }
      const failIfErrored = () => {
        if (errors.length > 0)
          throw new Error(
            `pg-boss reported an error: ${String(/** @type {Error} */ (errors[0])?.message ?? errors[0])}`,
            { cause: errors[0] },
          );
      };
      const inFlight = batched
        ? `${workers} work() calls with batchSize ${batchSize} each (up to ${workers * batchSize} jobs fetched and in flight at once; concurrency ${concurrency} does not apply)`
        : `${workers} work() calls (batchSize 1 each, so at most ${workers} jobs in flight)`;
      return {
        version: installedVersion("pg-boss"),
        settings: `${inFlight}, pollingIntervalSeconds ${pollingMs / 1000}${pollingMs > pollingInterval ? " (its minimum)" : ""}; pool max ${concurrency + 2}; schedule and supervise off; queue policy "standard"`,
        pollingIntervalMs: pollingMs,
        enqueue: async (queue, payload) => {
          await boss.send(queue, payload);
        },
        enqueueBatch: async (queue, payloads) => {
          await boss.insert(payloads.map((data) => ({ name: queue, data })));
        },
        startWorker: async (queue, handler) => {
          const options = { batchSize, pollingIntervalSeconds: pollingMs / 1000 };
          // Each work() call is one polling worker.
          const ids = [];
          for (let i = 0; i < workers; i++) {
            ids.push(
              await boss.work(queue, options, async (jobs) => {
                for (const job of jobs) handler(job.data);
              }),
            );
          }
          return {
            stop: async () => {
              for (const id of ids) await boss.offWork({ id });
              // offWork() returns before the workers' loops end: a fetch under way still returns
              // jobs and runs them (even jobs enqueued after this stop, for the next phase), and
              // completions are sent unawaited. Wait until none of pg-boss's queries is in flight.
              await untilIdle(boss.getDb().pool);
              failIfErrored();
            },
          };
        },
        clear: async (queue) => {
          await boss.purgeQueue(queue);
        },
        close: async () => {
          await boss.stop({ graceful: false, wait: true, close: true });
          failIfErrored();
        },
      };
    },
  };
}

/** Checks in a row that must find the pool idle; a fetch's result leads to its completion within microtasks. */
const IDLE_CHECKS = 3;
const IDLE_CHECK_MS = 10;
const IDLE_TIMEOUT_MS = 30_000;

/**
 * Resolve once no client of the pool is checked out and no query waits for one.
 * @param {import("pg").Pool} pool
 */
async function untilIdle(pool) {
  const deadline = Date.now() + IDLE_TIMEOUT_MS;
  for (let idle = 0; idle < IDLE_CHECKS; ) {
    if (Date.now() > deadline)
      throw new Error(`pg-boss still had queries in flight ${IDLE_TIMEOUT_MS / 1000} s after its workers were stopped`);
    await new Promise((resolve) => setTimeout(resolve, IDLE_CHECK_MS));
    idle = pool.totalCount - pool.idleCount + pool.waitingCount === 0 ? idle + 1 : 0;
  }
}
