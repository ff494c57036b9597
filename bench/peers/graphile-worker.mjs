// graphile-worker: PostgreSQL-only; new jobs wake workers through LISTEN/NOTIFY, polling is the fallback.
import { importPeer, installedVersion } from "./adapter.mjs";

/** @type {import("./adapter.mjs").PeerAdapter} */
export const graphileWorkerAdapter = {
  id: "graphile-worker",
  label: "graphile-worker (PostgreSQL)",
  server: "postgres",
  packageName: "graphile-worker",
  async open({ url, concurrency, pollingInterval }) {
    const { run, makeWorkerUtils, Logger } = await importPeer("graphile-worker");
    const logger = new Logger(() => () => {});
    const utils = await makeWorkerUtils({ connectionString: url, logger });
    try {
      await utils.migrate();
    } catch (error) {
      await utils.release();
      throw error;
    }
    return {
      version: installedVersion("graphile-worker"),
      settings: `run() with concurrency ${concurrency}, pollInterval ${pollingInterval} ms (a fallback: LISTEN/NOTIFY wakes workers on insert), maxPoolSize ${concurrency + 2}; defaults otherwise (no localQueue batching, no completeJobBatchDelay); jobs are deleted on completion`,
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
