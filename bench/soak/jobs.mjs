// The soak's jobs, loaded by `firm-queue start` (and each fork-mode child) through soak.config.mjs.
// The database URL comes from FIRM_QUEUE_DATABASE_URL. Finished jobs are kept for two minutes and
// the dispatcher clears them every 30 s (soak.config.mjs), so the jobs table stays bounded.
import { FirmQueue } from "../../dist/index.js";

export const firm = new FirmQueue({ logLevel: "warn", clearFinishedJobsAfter: "2m" });

export const work = firm.defineJob(
  "soak-work",
  async ({ n, failFirst }, { attempt }) => {
    // Some garbage per job, as real handlers make: a leak in the worker would keep some of it.
    const scratch = JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ i, n })));
    if (failFirst && attempt === 1) throw new Error(`planned first-attempt failure (${scratch.length})`);
    await new Promise((resolve) => setTimeout(resolve, 2 + (n % 8)));
  },
  { retry: { attempts: 3, backoff: "1s" } },
);

export const tick = firm.defineJob("soak-tick", async () => {});

export default firm;
