// BullMQ, on Redis (its home) or on its PostgreSQL backend. Workers block on the store (BZPOPMIN
// on Redis, LISTEN/NOTIFY on PostgreSQL) instead of polling.
import pg from "pg";
import { importPeer, installedVersion } from "./adapter.mjs";

/** BullMQ jobs carry a name besides their queue; the benchmark uses one. */
const JOB_NAME = "bench";

/**
 * @param {"redis" | "postgres"} backend
 * @returns {import("./adapter.mjs").PeerAdapter}
 */
export function bullmqAdapter(backend) {
  return {
    id: `bullmq-${backend}`,
    label: `BullMQ (${backend === "redis" ? "Redis" : "PostgreSQL"})`,
    server: backend,
    packageName: "bullmq",
    async open({ url, concurrency, pollingInterval, queues }) {
      const bullmq = await importPeer("bullmq");
      let options;
      /** @type {unknown[]} */
      let factory = [];
      if (backend === "redis") {
        const { hostname, port } = new URL(url);
        // Workers need maxRetriesPerRequest null (BullMQ checks it).
        options = { connection: { host: hostname, port: Number(port), maxRetriesPerRequest: null } };
      } else {
        await migrate(bullmq, url);
        options = { connection: { connectionString: url, max: concurrency + 2 } };
        factory = [bullmq.createPostgresBackend];
      }
      const handles = new Map(queues.map((name) => [name, new bullmq.Queue(name, options, ...factory)]));
      const queue = (/** @type {string} */ name) => /** @type {any} */ (handles.get(name));
      try {
        for (const handle of handles.values()) await handle.waitUntilReady();
      } catch (error) {
        await Promise.allSettled([...handles.values()].map((handle) => handle.close()));
        throw error;
      }
      return {
        version: installedVersion("bullmq") + (backend === "redis" ? `, ioredis ${installedVersion("ioredis")}` : ""),
        settings: `one Worker with concurrency ${concurrency}; ${backend === "redis" ? "blocking BZPOPMIN, no polling" : `LISTEN/NOTIFY, no polling; pool max ${concurrency + 2} per Queue/Worker`}; defaults otherwise (completed jobs kept)`,
        pollingIntervalMs: pollingInterval,
        enqueue: async (name, payload) => {
          await queue(name).add(JOB_NAME, payload);
        },
        enqueueBatch: async (name, payloads) => {
          await queue(name).addBulk(payloads.map((data) => ({ name: JOB_NAME, data })));
        },
        startWorker: async (name, handler) => {
          const worker = new bullmq.Worker(
            name,
            async (/** @type {any} */ job) => {
              handler(job.data);
            },
            { ...options, concurrency },
            ...factory,
          );
          const errors = [];
          worker.on("error", (/** @type {unknown} */ error) => errors.push(error));
          await worker.waitUntilReady();
          return {
            stop: async () => {
              await worker.close();
              if (errors.length > 0)
                throw new Error(`BullMQ worker reported an error: ${String(errors[0])}`, { cause: errors[0] });
            },
          };
        },
        clear: async (name) => {
          await queue(name).drain();
        },
        close: async () => {
          for (const handle of handles.values()) await handle.close();
        },
      };
    },
  };
}

/** BullMQ's PostgreSQL schema is created explicitly, once, on a dedicated session. */
async function migrate(bullmq, url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await bullmq.runMigrations(client);
  } finally {
    await client.end();
  }
}
