import { FirmQueue, silentLogger } from "../../src/index.js";
import { CHAOS_QUEUES, KEYED_JOB, PLAIN_JOB, defineChaosJobs, type ChaosArgs } from "../fixtures/chaos-jobs.js";
import type { Random } from "./chaos-settings.js";

/** Keys the keyed jobs spread over: few enough that each key has a long line of waiting jobs. */
const KEYS = 8;

interface PlannedJob {
  readonly name: string;
  readonly args: ChaosArgs;
  readonly options: { queue?: string; priority: number; wait?: number };
}

/**
 * A batch of the chaos mix: about a third keyed (limit 1 per key), the rest plain over two
 * queues; a few fail their first attempt, some are scheduled a moment ahead (so the dispatcher
 * works too), and each works for up to 25 ms.
 */
export function planJobs(random: Random, count: number): PlannedJob[] {
  return Array.from({ length: count }, () => {
    const keyed = random.next() < 0.35;
    const args: ChaosArgs = {
      key: keyed ? `k${random.int(KEYS)}` : null,
      ms: random.int(26),
      failFirst: random.next() < 0.04,
    };
    const wait = random.next() < 0.1 ? random.between(100, 1500) : undefined;
    const options = {
      priority: random.int(3),
      ...(keyed ? {} : { queue: random.pick(CHAOS_QUEUES.slice(0, 2)) }),
      ...(wait ? { wait } : {}),
    };
    return { name: keyed ? KEYED_JOB : PLAIN_JOB, args, options };
  });
}

/**
 * Enqueue `jobs` straight to the database (never through the proxy), on a connection opened for
 * this batch and closed after it, so that no connection of the test's is open when the server
 * restarts. Returns the new job ids.
 */
export async function enqueueJobs(databaseUrl: string, jobs: readonly PlannedJob[]): Promise<number[]> {
  const firm = new FirmQueue({ databaseUrl, logger: silentLogger });
  defineChaosJobs(firm, async () => {});
  try {
    const ids: number[] = [];
    for (let start = 0; start < jobs.length; start += 25) {
      const chunk = jobs.slice(start, start + 25);
      const enqueued = await Promise.all(chunk.map((job) => firm.enqueue(job.name, job.args, job.options)));
      for (const { id } of enqueued) {
        if (id === null)
          throw new Error("a chaos job was discarded at enqueue; the keyed job blocks, it never discards");
        ids.push(id);
      }
    }
    return ids;
  } finally {
    await firm.close();
  }
}
