// firm-queue itself, on any of its databases: the reference every ratio is taken against.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { importPeer } from "./adapter.mjs";
import { fillRetainedJobs } from "./retained.mjs";
import { applySchemaWhatIf } from "./schema-what-if.mjs";

const LABELS = { postgres: "PostgreSQL", mysql: "MariaDB", sqlite: "SQLite" };

/**
 * @param {"postgres" | "mysql" | "sqlite"} dialect
 * @param {{ preserveFinishedJobs?: boolean, whatIf?: { id: string, label: string, statements: readonly string[] } }} [variant]
 *   preserveFinishedJobs false: the "-delete" variant, finished jobs deleted at once; whatIf: a
 *   schema change run after migrating (PostgreSQL; see ./schema-what-if.mjs)
 * @returns {import("./adapter.mjs").PeerAdapter}
 */
export function firmQueueAdapter(dialect, { preserveFinishedJobs = true, whatIf } = {}) {
  return {
    id: `firm-queue-${dialect}${preserveFinishedJobs ? "" : "-delete"}${whatIf ? `-what-if-${whatIf.id}` : ""}`,
    label: `firm-queue${preserveFinishedJobs ? "" : " deleting"} (${LABELS[dialect]})${whatIf ? `, what-if: ${whatIf.label}` : ""}`,
    server: dialect,
    packageName: "firm-queue",
    retains: true,
    onlyWhenNamed: whatIf !== undefined,
    async open({ url, concurrency, pollingInterval, queues, attach, retained = 0 }) {
      const { FirmQueue, silentLogger } = await importPeer("firm-queue");
      const firm = new FirmQueue({
        databaseUrl: url,
        logger: silentLogger,
        poolSize: concurrency + 2,
        preserveFinishedJobs,
      });
      try {
        if (!attach) await firm.migrate();
        if (!attach && whatIf) await applySchemaWhatIf(url, whatIf.statements);
        // Finished jobs of the queue and job the throughput phase uses, as if it had run before.
        if (!attach && retained > 0)
          await fillRetainedJobs(dialect, url, retained, { queue: queues[0], jobName: queues[0] });
      } catch (error) {
        await firm.close();
        throw error;
      }
      /** @type {Map<string, (payload: any) => void>} */
      const handlers = new Map();
      // Jobs are defined up front: one job name per queue, each calling whatever handler the
      // current phase installed.
      const jobs = new Map(
        queues.map((queue) => [queue, firm.defineJob(queue, (payload) => handlers.get(queue)?.(payload), { queue })]),
      );
      return {
        version: firmQueueVersion(),
        settings: `one worker: queues "*", concurrency ${concurrency}, pollingInterval ${pollingInterval} ms; poolSize ${concurrency + 2}; no dispatcher; preserveFinishedJobs ${preserveFinishedJobs}${preserveFinishedJobs ? " (default)" : " (finished jobs deleted at once)"}${whatIf ? `; schema what-if, not a firm-queue setting: ${whatIf.statements.join("; ")}` : ""}${retained > 0 ? `; ${retained} finished jobs in the table before the run` : ""}`,
        pollingIntervalMs: pollingInterval,
        enqueue: async (queue, payload) => {
          await jobs.get(queue).enqueue(payload);
        },
        enqueueBatch: async (queue, payloads) => {
          await jobs.get(queue).enqueueAll(payloads);
        },
        startWorker: async (queue, handler) => {
          handlers.set(queue, handler);
          const supervisor = await firm.start({
            workers: [{ queues: "*", concurrency, pollingInterval }],
            dispatchers: [],
          });
          return { stop: () => supervisor.stop() };
        },
        clear: async (queue) => {
          // Nothing is claimed once the worker has stopped: the queue's waiting jobs are all ready.
          await firm.queues.clear(queue);
        },
        close: () => firm.close(),
      };
    },
  };
}

/** The package version plus the commit benchmarked, since firm-queue is measured from this tree. */
function firmQueueVersion() {
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: new URL("../..", import.meta.url),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], {
      cwd: new URL("../..", import.meta.url),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return `${version} (${commit}${dirty ? ", src modified" : ""})`;
  } catch {
    return version;
  }
}
