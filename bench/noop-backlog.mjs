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
