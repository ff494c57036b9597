// graphile-worker: PostgreSQL-only; new jobs wake workers through LISTEN/NOTIFY, polling is the fallback.
// Two variants: its defaults (a worker fetches and completes one job per round trip), and at its
// best for a backlog of short jobs, with the batching it documents for performance: a local queue
// fetching (and locking) up to 500 jobs at a time, and completions batched without delay.
import { importPeer, installedVersion } from "./adapter.mjs";

/** Jobs the batched variant's local queue fetches at once. */
const LOCAL_QUEUE_SIZE = 500;

/**
 * @param {{ batched: boolean }} variant
 * @returns {import("./adapter.mjs").PeerAdapter}
 */
export function graphileWorkerAdapter({ batched }) {
  return {
    id: batched ? "graphile-worker-batched" : "graphile-worker",
    label: `graphile-worker${batched ? " batched" : ""} (PostgreSQL)`,
    server: "postgres",
    packageName: "graphile-worker",
    async open({ url, concurrency, pollingInterval, attach }) {
      const { run, makeWorkerUtils, Logger } = await importPeer("graphile-worker");
      const logger = new Logger(() => () => {});
      const utils = await makeWorkerUtils({ connectionString: url, logger });
      try {
        if (!attach) await utils.migrate();
      } catch (error) {
        await utils.release();
        throw error;
      }
      // Options graphile-worker 0.17 takes only through a preset.
      const preset = batched
        ? { worker: { localQueue: { size: LOCAL_QUEUE_SIZE }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } }
        : undefined;
      const batching = batched
        ? `localQueue size ${LOCAL_QUEUE_SIZE}, completeJobBatchDelay 0, failJobBatchDelay 0 (set through \`preset.worker\`)`
        : "no localQueue batching, no completeJobBatchDelay";
      return {
        version: installedVersion("graphile-worker"),
        settings: `run() with concurrency ${concurrency}, pollInterval ${pollingInterval} ms (a fallback: LISTEN/NOTIFY wakes workers on insert), maxPoolSize ${concurrency + 2}; ${batching}; defaults otherwise; jobs are deleted on completion`,
        pollingIntervalMs: pollingInterval,
        // Queues of the benchmark are task identifiers here: a runner only fetches jobs of the
        // tasks in its task list.
        enqueue: async (queue, payload) => {
          await utils.addJob(queue, payload);
        },
        enqueueBatch: async (queue, payloads) => {
          await utils.addJobs(payloads.map((payload) => ({ identifier: queue, payload })));
        },
        startWorker: async (queue, handler) => {
          const runner = await run({
            connectionString: url,
            concurrency,
            pollInterval: pollingInterval,
            maxPoolSize: concurrency + 2,
            noHandleSignals: true,
            logger,
            crontab: "",
            ...(preset ? { preset } : {}),
            taskList: {
              [queue]: async (payload) => {
                handler(payload);
              },
            },
          });
          return { stop: () => runner.stop() };
        },
        clear: async (queue) => {
          // No purge-by-task API: delete the task's unlocked jobs from its tables.
          await utils.withPgClient((client) =>
            client.query(
              "DELETE FROM graphile_worker._private_jobs AS j USING graphile_worker._private_tasks AS t WHERE j.task_id = t.id AND t.identifier = $1 AND j.locked_at IS NULL",
              [queue],
            ),
          );
        },
        close: () => utils.release(),
      };
    },
  };
}
