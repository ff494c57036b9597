// The job module bench/rate-limit-budget.mjs's worker processes import (fork mode): a no-op job
// with a budget of BENCH_RATE_LIMIT starts per second, and one without. The database comes from
// FIRM_QUEUE_DATABASE_URL, which the supervisor sets for its children.
import { FirmQueue, silentLogger } from "firm-queue";

export const firm = new FirmQueue({ logger: silentLogger });
defineMetered(firm);

/**
 * Define the jobs "metered" and "unmetered" on `queue` (the script's own FirmQueue
 * defines them too, to enqueue them).
 * @param {any} queue
 */
export function defineMetered(queue) {
  const unmetered = queue.defineJob("unmetered", async () => {});
  const metered = queue.defineJob("metered", async () => {}, {
    rateLimit: { limit: Number(process.env.BENCH_RATE_LIMIT ?? 1000), period: "1s" },
  });
  return { metered, unmetered };
}
