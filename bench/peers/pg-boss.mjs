// pg-boss: PostgreSQL-only, polling workers (no LISTEN/NOTIFY in the versions that run on Node 20).
import { importPeer, installedVersion } from "./adapter.mjs";

/** pg-boss refuses a polling interval under half a second. */
const MIN_POLLING_MS = 500;

/** @type {import("./adapter.mjs").PeerAdapter} */
export const pgBossAdapter = {
  id: "pg-boss",
  label: "pg-boss (PostgreSQL)",
  server: "postgres",
  packageName: "pg-boss",
  async open({ url, concurrency, pollingInterval, queues }) {
    const { default: PgBoss } = await importPeer("pg-boss");
    const pollingMs = Math.max(pollingInterval, MIN_POLLING_MS);
    // No cron scheduling and no maintenance loop: the benchmark measures the job path only,
    // as firm-queue runs without its dispatcher.
    const boss = new PgBoss({ connectionString: url, max: concurrency + 2, schedule: false, supervise: false });
    /** @type {unknown[]} */
    const errors = [];
    boss.on("error", (error) => errors.push(error));
    await boss.start();
    try {
      for (const queue of queues) await boss.createQueue(queue);
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
    return {
      version: installedVersion("pg-boss"),
      settings: `${concurrency} work() calls (batchSize 1 each, so at most ${concurrency} jobs in flight), pollingIntervalSeconds ${pollingMs / 1000}${pollingMs > pollingInterval ? " (its minimum)" : ""}; pool max ${concurrency + 2}; schedule and supervise off; queue policy "standard"`,
      pollingIntervalMs: pollingMs,
      enqueue: async (queue, payload) => {
        await boss.send(queue, payload);
      },
      enqueueBatch: async (queue, payloads) => {
        await boss.insert(payloads.map((data) => ({ name: queue, data })));
      },
      startWorker: async (queue, handler) => {
        const options = { batchSize: 1, pollingIntervalSeconds: pollingMs / 1000 };
        // Each work() call is one polling worker; concurrency C is C of them.
        const ids = [];
        for (let i = 0; i < concurrency; i++) {
          ids.push(
            await boss.work(queue, options, async (jobs) => {
              for (const job of jobs) handler(job.data);
            }),
          );
        }
        return {
          stop: async () => {
            for (const id of ids) await boss.offWork({ id });
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
