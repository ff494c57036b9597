import type { Database } from "../database/connection.js";
import type { JobRow } from "../models/job.js";
import type { QueueSelector } from "./queue-selector.js";
import { claimReadyExecutions } from "../models/ready-execution.js";

/**
 * Claim up to `limit` ready jobs for `processId` from the queues `selector` picks, polling its
 * targets in order until the limit is reached, and return the claimed jobs' rows in claim order:
 * queue order first, then (priority, id) inside each queue.
 */
export async function claimJobs(database: Database, selector: QueueSelector, limit: number, processId: number): Promise<JobRow[]> {
  const claimed: JobRow[] = [];
  for (const target of await selector.targets(database.db)) {
    const remaining = limit - claimed.length;
    if (remaining <= 0) break;
    claimed.push(...(await claimReadyExecutions(database, target, remaining, processId, new Date())));
  }
  return claimed;
}
