// The worker side of one system's run, in a process of its own (started by ./worker-handle.mjs).
// The benchmark's process creates the schema and enqueues every job; this process opens the same
// system with `attach` and runs its workers, so that (1) the resident memory measured here is a
// worker's, not the benchmark's with every library it has loaded, and (2) the jobs of the latency
// samples are enqueued from another process, as an application's web process would.
//
// Protocol: the parent sends { id, method, args }, this process answers { id, result } or
// { id, error }; while a latency worker runs, each job start is sent as { event: "started", latency }.
import { serverCpuMs } from "../server-cpu.mjs";
import { hrNow, sleep, withTimeout } from "./clock.mjs";
import { logPositionReader } from "./log-position.mjs";
import { probeMs } from "./machine-probe.mjs";
import { ADAPTERS } from "./index.mjs";

/** How often resident memory is sampled while a backlog is processed. */
const RSS_SAMPLE_MS = 20;
/** A single latency sample taking longer than this means the system is stuck, not slow. */
const SAMPLE_TIMEOUT_MS = 15_000;
/** Time a starting worker gets (connections, LISTEN) before it is expected to pick jobs up at once. */
const SETTLE_MS = 500;

/** @type {import("./adapter.mjs").PeerSystem | undefined} */
let system;
/** The URL the system was opened on: its server's CPU time is read by its port. */
let systemUrl = "";
/** @type {import("./adapter.mjs").RunningWorker | undefined} */
let worker;

const methods = {
  /** @param {{ id: string, options: import("./adapter.mjs").OpenOptions }} args */
  async open({ id, options }) {
    const adapter = ADAPTERS.find((candidate) => candidate.id === id);
    if (!adapter) throw new Error(`unknown system ${id}`);
    system = await adapter.open({ ...options, attach: true });
    systemUrl = options.url;
    return { pid: process.pid };
  },

  /**
   * Start a worker on a backlog and time it from the first job's start to the last one's;
   * resident memory is sampled all along. What this process and the database server spent from the
   * first start until the last is seen (within one 5 ms poll of each) is measured too: their CPU
   * time, and the server's durable log written (PostgreSQL's WAL, InnoDB's redo log). The
   * machine's speed is probed just before the worker starts and just after it stops (`probe`, the
   * mean of the two, in ms: see ./machine-probe.mjs).
   * @param {{ queue: string, jobs: number, maxSeconds: number }} args
   */
  async processBacklog({ queue, jobs, maxSeconds }) {
    let count = 0;
    let first = 0;
    let last = 0;
    let rss = process.memoryUsage.rss();
    /** @type {{ jobs: number, worker: NodeJS.CpuUsage, serverMs: number, logBytes: number } | undefined} */
    let atFirst;
    let spent = { jobs: 0, workerMs: 0, serverMs: 0, logBytes: 0 };
    const log = await logPositionReader(systemUrl);
    const logBytes = async () => (log ? log.bytes() : 0);
    const probeBefore = probeMs();
    const sampler = setInterval(() => (rss = Math.max(rss, process.memoryUsage.rss())), RSS_SAMPLE_MS);
    try {
      const running = await opened().startWorker(queue, () => {
        last = performance.now();
        if (count++ === 0) first = last;
      });
      try {
        const deadline = performance.now() + maxSeconds * 1000;
        while (count < jobs && performance.now() < deadline) {
          await sleep(5);
          if (count > 0 && atFirst === undefined)
            atFirst = {
              jobs: count,
              worker: process.cpuUsage(),
              serverMs: serverCpuMs(systemUrl),
              logBytes: await logBytes(),
            };
        }
        if (atFirst !== undefined) {
          const worker = process.cpuUsage(atFirst.worker);
          spent = {
            jobs: count - atFirst.jobs,
            workerMs: (worker.user + worker.system) / 1000,
            serverMs: serverCpuMs(systemUrl) - atFirst.serverMs,
            logBytes: (await logBytes()) - atFirst.logBytes,
          };
        }
      } finally {
        await running.stop();
      }
    } finally {
      clearInterval(sampler);
      await log?.close();
    }
    rss = Math.max(rss, process.memoryUsage.rss());
    const probe = (probeBefore + probeMs()) / 2;
    const processed = Math.min(count, jobs);
    if (processed < 2)
      throw new Error(`only ${processed} job(s) started within ${maxSeconds} s: the worker is not picking up jobs`);
    // Per job started while it was measured (from the first poll that saw a start).
    const perJob = (amount) => (spent.jobs > 0 ? amount / spent.jobs : undefined);
    return {
      // Rate over the intervals between starts: worker start-up is left out for every system alike.
      processing: (processed - 1) / ((last - first) / 1000),
      processed,
      rss,
      workerCpu: perJob(spent.workerMs * 1000),
      // No server of its own on this machine (SQLite in the worker, a server given by URL: /proc
      // shows it no CPU time): none.
      serverCpu: atFirst !== undefined && atFirst.serverMs > 0 ? perJob(spent.serverMs * 1000) : undefined,
      logPerJob: log ? perJob(spent.logBytes) : undefined,
      probe,
    };
  },

  /**
   * Start an idle worker whose every job start is reported to the parent, with the time since
   * the `sentAt` (hrNow() in the enqueuing process) its payload carries.
   * @param {{ queue: string }} args
   */
  async startLatencyWorker({ queue }) {
    if (worker) throw new Error("a latency worker is running already");
    worker = await opened().startWorker(queue, (payload) =>
      send({ event: "started", latency: hrNow() - payload.sentAt }),
    );
    await sleep(SETTLE_MS);
  },

  async stopLatencyWorker() {
    const running = worker;
    worker = undefined;
    await running?.stop();
  },

  /**
   * Latency with the job enqueued in this process, the worker's own (the path the first
   * benchmarks measured): one job at a time, after a random pause within the polling interval.
   * @param {{ queue: string, samples: number, maxSeconds: number }} args
   */
  async inProcessLatency({ queue, samples, maxSeconds }) {
    const own = opened();
    /** @type {((ms: number) => void) | undefined} */
    let onStart;
    const running = await own.startWorker(queue, (payload) => onStart?.(hrNow() - payload.sentAt));
    const latencies = [];
    try {
      await sleep(SETTLE_MS);
      const deadline = performance.now() + maxSeconds * 1000;
      while (latencies.length < samples && performance.now() < deadline) {
        await sleep(Math.random() * own.pollingIntervalMs);
        const started = new Promise((resolve) => (onStart = resolve));
        const within = withTimeout(
          started,
          SAMPLE_TIMEOUT_MS,
          `a job enqueued on an idle worker did not start within ${SAMPLE_TIMEOUT_MS / 1000} s`,
        );
        // Marked handled now: it may reject while the enqueue is still being awaited.
        within.catch(() => {});
        await own.enqueue(queue, { sentAt: hrNow() });
        latencies.push(await within);
        onStart = undefined;
      }
    } finally {
      await running.stop();
    }
    return latencies;
  },

  /** Stop and close; the process exits once the answer is sent (below). */
  async close() {
    await shutDown();
  },
};

function opened() {
  if (!system) throw new Error("the system is not open in the worker process");
  return system;
}

/** Stop the worker and close the system, at most once and within a bounded time. */
let closing = /** @type {Promise<void> | undefined} */ (undefined);
function shutDown() {
  closing ??= withTimeout(
    (async () => {
      await methods.stopLatencyWorker().catch(() => undefined);
      await system?.close();
    })(),
    15_000,
    "closing the system took more than 15 s",
  );
  return closing;
}

/** @param {object} message @param {() => void} [then] called once the message is on its way */
function send(message, then) {
  if (process.connected) process.send?.(message, undefined, {}, then);
  else then?.();
}

process.on(
  "message",
  async (/** @type {{ id: number, method: keyof typeof methods, args: any }} */ { id, method, args }) => {
    // After "close", exit once the answer has left (the parent waits for the exit too).
    const then = method === "close" ? () => process.exit(0) : undefined;
    try {
      const result = await methods[method](args);
      send({ id, result }, then);
    } catch (error) {
      send({ id, error: /** @type {Error} */ (error)?.stack ?? String(error) }, then);
    }
  },
);

// The benchmark went away (a crash, a kill) or asks us to stop: leave no connection behind.
const leave = () => void shutDown().finally(() => process.exit(1));
process.on("disconnect", leave);
process.once("SIGINT", leave);
process.once("SIGTERM", leave);
