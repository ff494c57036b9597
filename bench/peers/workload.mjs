// The workload every system runs, the same way, through the PeerSystem interface (./adapter.mjs).

/** Rows per call of a library's bulk API. */
export const BATCH = 1000;
const THROUGHPUT_QUEUE = "bench";
const LATENCY_QUEUE = "latency";
/** Queue names a system must be opened with. */
export const QUEUES = [THROUGHPUT_QUEUE, LATENCY_QUEUE];
const WARM_UP_JOBS = 60;
const WARM_UP_SECONDS = 10;
/** A single latency sample taking longer than this means the system is stuck, not slow. */
const SAMPLE_TIMEOUT_MS = 15_000;

/**
 * @typedef {object} WorkloadOptions
 * @property {number} jobs            backlog size; a fifth is enqueued one by one, the rest in batches
 * @property {number} latencySamples
 * @property {number} maxSeconds      time budget of the processing and the latency phase each
 * @property {(message: string) => void} progress
 *
 * @typedef {object} Measurement
 * @property {number} enqueueOne      jobs/s, one awaited call per job
 * @property {number} enqueueBatch    jobs/s, bulk API in batches of BATCH
 * @property {number} processing      jobs/s, from the first job's start to the last one's
 * @property {number} processed       jobs started within the budget (less than `jobs` when cut short)
 * @property {number} median          ms from enqueue to start, idle worker
 * @property {number} p99
 * @property {number} samples         latency samples taken within the budget
 */

/**
 * @param {import("./adapter.mjs").PeerSystem} system
 * @param {WorkloadOptions} options
 * @returns {Promise<Measurement>}
 */
export async function runWorkload(system, { jobs, latencySamples, maxSeconds, progress }) {
  const singles = Math.max(1, Math.floor(jobs / 5));
  const batched = jobs - singles;

  // Untimed: the first system of a run would otherwise pay for a cold server and cold JIT.
  progress(`warm-up: ${WARM_UP_JOBS} jobs enqueued and processed, untimed`);
  for (let i = 0; i < WARM_UP_JOBS / 2; i++) await system.enqueue(THROUGHPUT_QUEUE, { i });
  await system.enqueueBatch(
    THROUGHPUT_QUEUE,
    Array.from({ length: WARM_UP_JOBS / 2 }, (_, i) => ({ i })),
  );
  await processBacklog(system, WARM_UP_JOBS, WARM_UP_SECONDS);
  await system.clear(THROUGHPUT_QUEUE);

  progress(`enqueue one by one: ${singles} jobs`);
  let started = performance.now();
  for (let i = 0; i < singles; i++) await system.enqueue(THROUGHPUT_QUEUE, { i });
  const enqueueOne = singles / secondsSince(started);

  progress(`bulk enqueue: ${batched} jobs in batches of ${BATCH}`);
  started = performance.now();
  for (let from = 0; from < batched; from += BATCH) {
    const payloads = Array.from({ length: Math.min(BATCH, batched - from) }, (_, k) => ({ i: singles + from + k }));
    await system.enqueueBatch(THROUGHPUT_QUEUE, payloads);
  }
  const enqueueBatch = batched / secondsSince(started);

  progress(`processing: ${jobs} jobs (at most ${maxSeconds} s)`);
  const { processing, processed } = await processBacklog(system, jobs, maxSeconds);
  await system.clear(THROUGHPUT_QUEUE);

  progress(`latency: ${latencySamples} samples (at most ${maxSeconds} s)`);
  const latencies = await sampleLatency(system, latencySamples, maxSeconds);
  latencies.sort((a, b) => a - b);
  return {
    enqueueOne,
    enqueueBatch,
    processing,
    processed,
    median: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    samples: latencies.length,
  };
}

/** Start a worker on the backlog and time it from the first job's start to the last one's. */
async function processBacklog(system, jobs, maxSeconds) {
  let count = 0;
  let first = 0;
  let last = 0;
  const worker = await system.startWorker(THROUGHPUT_QUEUE, () => {
    last = performance.now();
    if (count++ === 0) first = last;
  });
  try {
    const deadline = performance.now() + maxSeconds * 1000;
    while (count < jobs && performance.now() < deadline) await sleep(5);
  } finally {
    await worker.stop();
  }
  const processed = Math.min(count, jobs);
  if (processed < 2)
    throw new Error(`only ${processed} job(s) started within ${maxSeconds} s: the worker is not picking up jobs`);
  // Rate over the intervals between starts: worker start-up is left out for every system alike.
  return { processing: (processed - 1) / ((last - first) / 1000), processed };
}

/**
 * One job at a time, each enqueued after the previous one started and a random pause within the
 * system's polling interval, so samples land at random points of its polling cycle.
 */
async function sampleLatency(system, samples, maxSeconds) {
  /** @type {((ms: number) => void) | undefined} */
  let onStart;
  const worker = await system.startWorker(LATENCY_QUEUE, (payload) => onStart?.(now() - payload.sentAt));
  const latencies = [];
  try {
    // Let the worker finish starting (connections, LISTEN) before the first sample.
    await sleep(500);
    const deadline = performance.now() + maxSeconds * 1000;
    while (latencies.length < samples && performance.now() < deadline) {
      await sleep(Math.random() * system.pollingIntervalMs);
      /** @type {NodeJS.Timeout | undefined} */
      let timer;
      const startedWithin = new Promise((resolve, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`a job enqueued on an idle worker did not start within ${SAMPLE_TIMEOUT_MS / 1000} s`)),
          SAMPLE_TIMEOUT_MS,
        );
        onStart = resolve;
      });
      // Marked handled now: it may reject while the enqueue is still being awaited.
      startedWithin.catch(() => {});
      try {
        await system.enqueue(LATENCY_QUEUE, { sentAt: now() });
        latencies.push(await startedWithin);
      } finally {
        clearTimeout(timer);
        onStart = undefined;
      }
    }
  } finally {
    await worker.stop();
  }
  return latencies;
}

/** Wall-clock ms with sub-ms precision, comparable across the process (payloads carry it). */
function now() {
  return performance.timeOrigin + performance.now();
}

function secondsSince(start) {
  return (performance.now() - start) / 1000;
}

function percentile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
