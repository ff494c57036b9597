// The job module bench/rate-limit-budget.mjs's worker processes import (fork mode): one no-op
// job with a budget of BENCH_RATE_LIMIT starts per second. The database comes from
// FIRM_QUEUE_DATABASE_URL, which the supervisor sets for its children.
import { FirmQueue, silentLogger } from "firm-queue";

export const firm = new FirmQueue({ logger: silentLogger });
defineMetered(firm);

/**
 * Define the job "metered" on `firm` (the script's own FirmQueue defines it too, to enqueue it).
 * @param {any} queue
 */
export function defineMetered(queue) {
  return queue.defineJob("metered", async () => {}, {
    rateLimit: { limit: Number(process.env.BENCH_RATE_LIMIT ?? 1000), period: "1s" },
  });
}
