// The backlog the processing-path benches drain: a build of firm-queue to import, and no-op jobs
// enqueued a thousand at a time before the clock starts.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * firm-queue as installed (`"firm-queue"`) or a build elsewhere (a path to its dist/index.js,
 * e.g. a copy of a branch point for alternating before/after runs).
 * @param {string} lib
 */
export function importBuild(lib) {
  return import(lib === "firm-queue" ? lib : pathToFileURL(resolve(lib)).href);
}

/**
 * Define job "noop" on `firm` and enqueue `backlog` of them (at least `jobs`); `finished` settles
 * once `jobs` of them have run.
 * @param {any} firm a FirmQueue
 * @param {{ jobs: number, backlog?: number }} sizes
 * @returns {Promise<{ finished: Promise<void> }>}
 */
export async function enqueueNoopBacklog(firm, { jobs, backlog = jobs }) {
  let done = 0;
  let reached;
  const finished = new Promise((resolve) => (reached = resolve));
  const noop = firm.defineJob("noop", async () => {
    if (++done === jobs) reached();
  });
  const all = Array.from({ length: Math.max(jobs, backlog) }, (_, i) => ({ i }));
  for (let i = 0; i < all.length; i += 1000) await noop.enqueueAll(all.slice(i, i + 1000));
  return { finished };
}

/**
 * A FirmQueue of build `lib` on `url`, migrated (then `beforeEnqueue`, e.g. a schema what-if),
 * with the no-op backlog of {@link enqueueNoopBacklog} enqueued; its pool fits one worker of
 * `concurrency` slots.
 * @param {string} lib
 * @param {string} url
 * @param {{ jobs: number, backlog?: number, concurrency: number, options?: object, beforeEnqueue?: () => Promise<unknown> }} settings
 */
export async function noopBacklogOn(lib, url, { jobs, backlog, concurrency, options = {}, beforeEnqueue }) {
  const { FirmQueue, silentLogger } = await importBuild(lib);
  const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger, poolSize: concurrency + 2, ...options });
  await firm.migrate();
  await beforeEnqueue?.();
  const { finished } = await enqueueNoopBacklog(firm, { jobs, backlog });
  return { firm, finished };
}
