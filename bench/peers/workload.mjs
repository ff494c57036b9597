// The workload every system runs, the same way, through the PeerSystem interface (./adapter.mjs).
// Jobs are enqueued in this process; they run in the system's worker process (./worker-handle.mjs).
import { hrNow, secondsSince, sleep, withTimeout } from "./clock.mjs";

/** Rows per call of a library's bulk API. */
export const BATCH = 1000;
const THROUGHPUT_QUEUE = "bench";
const LATENCY_QUEUE = "latency";
/** Queue names a system must be opened with; the first is the throughput phase's. */
export const QUEUES = [THROUGHPUT_QUEUE, LATENCY_QUEUE];
const WARM_UP_JOBS = 60;
const WARM_UP_SECONDS = 10;
/** A single latency sample taking longer than this means the system is stuck, not slow. */
const SAMPLE_TIMEOUT_MS = 15_000;

/**
 * @typedef {object} WorkloadOptions
 * @property {number} jobs            jobs enqueued and timed; a fifth one by one, the rest in batches
 * @property {number} backlog         jobs waiting when processing starts (≥ jobs; the extra ones added
 *                                    untimed in bulk); the rate is taken over the first `jobs` starts
 * @property {number} latencySamples
 * @property {boolean} inProcessLatency  also sample latency with the job enqueued in the worker's process
 * @property {number} maxSeconds      time budget of the processing and of each latency phase
 * @property {(message: string) => void} progress
 *
 * @typedef {object} Measurement
 * @property {number} enqueueOne      jobs/s, one awaited call per job
 * @property {number} enqueueBatch    jobs/s, bulk API in batches of BATCH
 * @property {number} processing      jobs/s, from the first job's start to the last one's
 * @property {number} processed       jobs started within the budget (less than `jobs` when cut short)
 * @property {number} rss             MB, the worker process's largest resident set while processing
 * @property {number} workerCpu       ms of CPU (user + system) the worker process spent per 1,000 jobs processed
 * @property {number} [serverCpu]     ms of CPU the database server (every process of it) spent per 1,000
 *                                    jobs processed; absent without a server on this machine (SQLite)
 * @property {number} [logPerJob]     bytes of durable log (PostgreSQL WAL, InnoDB redo) the server wrote per job processed; absent on SQLite
 * @property {number} [probe]         ms a fixed piece of work took in the worker process just before and after processing
 *                                    (mean; ./machine-probe.mjs): the machine's speed around the run, not the system's
 * @property {number} median          ms from enqueue (in this process) to start (in the worker process), idle worker
 * @property {number} p99
 * @property {number} samples         latency samples taken within the budget
 * @property {number} [medianInProcess]  the same with the job enqueued in the worker's own process
 * @property {number} [p99InProcess]
 * @property {number} [samplesInProcess]
 */

/**
 * @param {import("./adapter.mjs").PeerSystem} system opened in this process: enqueues and clears
 * @param {import("./worker-handle.mjs").WorkerProcess} worker the same system's worker process
 * @param {WorkloadOptions} options
 * @returns {Promise<Measurement>}
 */
export async function runWorkload(
  system,
  worker,
  { jobs, backlog, latencySamples, inProcessLatency, maxSeconds, progress },
) {
  const singles = Math.max(1, Math.floor(jobs / 5));
  const batched = jobs - singles;

  // Untimed: the first system of a run would otherwise pay for a cold server and cold JIT.
  progress(`warm-up: ${WARM_UP_JOBS} jobs enqueued and processed, untimed`);
  for (let i = 0; i < WARM_UP_JOBS / 2; i++) await system.enqueue(THROUGHPUT_QUEUE, { i });
  await system.enqueueBatch(
    THROUGHPUT_QUEUE,
    Array.from({ length: WARM_UP_JOBS / 2 }, (_, i) => ({ i })),
  );
  await worker.call("processBacklog", { queue: THROUGHPUT_QUEUE, jobs: WARM_UP_JOBS, maxSeconds: WARM_UP_SECONDS });
  await system.clear(THROUGHPUT_QUEUE);

  progress(`enqueue one by one: ${singles} jobs`);
  let started = performance.now();
  for (let i = 0; i < singles; i++) await system.enqueue(THROUGHPUT_QUEUE, { i });
  const enqueueOne = singles / secondsSince(started);

  progress(`bulk enqueue: ${batched} jobs in batches of ${BATCH}`);
  started = performance.now();
  await enqueueInBatches(system, jobs - batched, batched);
  const enqueueBatch = batched / secondsSince(started);

  if (backlog > jobs) {
    progress(`backlog: ${backlog - jobs} more jobs in batches of ${BATCH}, untimed`);
    await enqueueInBatches(system, jobs, backlog - jobs);
  }

  progress(`processing: ${jobs} jobs of a ${backlog}-job backlog in the worker process (at most ${maxSeconds} s)`);
  const { processing, processed, rss, workerCpu, serverCpu, logPerJob, probe } = await worker.call("processBacklog", {
    queue: THROUGHPUT_QUEUE,
    jobs,
    maxSeconds,
  });
  await system.clear(THROUGHPUT_QUEUE);

  progress(`latency: ${latencySamples} samples, enqueued here, run in the worker process (at most ${maxSeconds} s)`);
  const latencies = sorted(await sampleLatency(system, worker, latencySamples, maxSeconds));
  const measurement = {
    enqueueOne,
    enqueueBatch,
    processing,
    processed,
    rss: rss / 2 ** 20,
    workerCpu,
    serverCpu,
    logPerJob,
    probe,
    median: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    samples: latencies.length,
  };
  if (!inProcessLatency) return measurement;

  progress(`latency: ${latencySamples} samples, enqueued in the worker process itself (at most ${maxSeconds} s)`);
  const own = sorted(
    await worker.call("inProcessLatency", { queue: LATENCY_QUEUE, samples: latencySamples, maxSeconds }),
  );
  return {
    ...measurement,
    medianInProcess: percentile(own, 0.5),
    p99InProcess: percentile(own, 0.99),
    samplesInProcess: own.length,
  };
}

/** `count` jobs through the bulk API, numbered from `from`. */
async function enqueueInBatches(system, from, count) {
  for (let done = 0; done < count; done += BATCH) {
    const payloads = Array.from({ length: Math.min(BATCH, count - done) }, (_, k) => ({ i: from + done + k }));
    await system.enqueueBatch(THROUGHPUT_QUEUE, payloads);
  }
}

/**
 * One job at a time on the worker process's idle worker, each enqueued here once the previous
 * one has started plus a random pause within the system's polling interval (so samples land at
 * random points of its polling cycle). `sentAt` is read just before the enqueue call; the worker
 * process subtracts it from its own reading of the same clock when the job starts.
 */
async function sampleLatency(system, worker, samples, maxSeconds) {
  await worker.call("startLatencyWorker", { queue: LATENCY_QUEUE });
  const latencies = [];
  try {
    const deadline = performance.now() + maxSeconds * 1000;
    while (latencies.length < samples && performance.now() < deadline) {
      await sleep(Math.random() * system.pollingIntervalMs);
      const started = withTimeout(
        new Promise((resolve) => (worker.onStarted = resolve)),
        SAMPLE_TIMEOUT_MS,
        `a job enqueued on an idle worker did not start within ${SAMPLE_TIMEOUT_MS / 1000} s`,
      );
      // Marked handled now: it may reject while the enqueue is still being awaited.
      started.catch(() => {});
      try {
        await system.enqueue(LATENCY_QUEUE, { sentAt: hrNow() });
        latencies.push(await started);
      } finally {
        worker.onStarted = undefined;
      }
    }
  } finally {
    await worker.call("stopLatencyWorker");
  }
  return latencies;
}

/** @param {number[]} values */
function sorted(values) {
  return [...values].sort((a, b) => a - b);
}

function percentile(sortedValues, fraction) {
  return sortedValues[Math.min(sortedValues.length - 1, Math.floor(fraction * sortedValues.length))] ?? Number.NaN;
}
