import type { Database } from "../database/connection.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { ConfigurationError } from "../errors.js";
import { checkQueueName, positiveInteger, rejectUnknownKeys } from "../option-checks.js";
import { discardReadyJobs } from "./queue-clear.js";
import { pauseQueue, resumeQueue } from "../models/pause.js";
import { listQueues, type QueueInfo } from "../models/queue-stats.js";
import { clearQueueRateLimit, type QueueRateLimit, setQueueRateLimit } from "./queue-rate-limits.js";

const CLEAR_KEYS = new Set(["batchSize", "onBatch"]);

/** Options of `firm.queues.clear()`. */
export interface ClearQueueOptions {
  /** Jobs deleted per transaction. Default 500. */
  readonly batchSize?: number;
  /** Called after each batch with the jobs it deleted and the running total (for a progress bar). */
  readonly onBatch?: (progress: { readonly batch: number; readonly total: number }) => void;
}

/** `firm.queues`: look at queues, pause or resume them, rate limit them, clear their waiting jobs. */
export class QueueOperations {
  constructor(
    private readonly database: () => Promise<Database>,
    private readonly policies: JobPolicies,
  ) {}

  /** Stop workers from claiming jobs of this queue. Jobs can still be enqueued. */
  async pause(name: string): Promise<void> {
    const database = await this.database();
    await pauseQueue(database.db, checkQueueName(name, "queue"), database.clock.now());
  }

  /** Let workers claim from this queue again. */
  async resume(name: string): Promise<void> {
    const { db } = await this.database();
    await resumeQueue(db, checkQueueName(name, "queue"));
  }

  /**
   * Let at most `limit` jobs of the queue start in any window of `period`, across every worker
   * and host (a sliding window on the database clock). Stored in the database: every running
   * worker obeys it within one polling interval. Setting it again changes it. Jobs with a rate
   * limit of their own obey both. See docs/rate-limits.md.
   */
  async setRateLimit(name: string, options: QueueRateLimit): Promise<void> {
    await setQueueRateLimit(this.database, name, options);
  }

  /** Remove the queue's rate limit (workers see it within one polling interval); returns whether it had one. */
  async clearRateLimit(name: string): Promise<boolean> {
    return clearQueueRateLimit(this.database, name);
  }

  /**
   * Clear the queue: delete its ready jobs and those waiting for a rate-limit budget for good,
   * in batches of `batchSize` (default 500). Jobs a worker is claiming at that very moment are
   * skipped, and so are scheduled, blocked, running and failed jobs of the queue. `onBatch`
   * hears of each batch. Returns how many were deleted.
   */
  async clear(name: string, options: ClearQueueOptions = {}): Promise<number> {
    const queue = checkQueueName(name, "queue");
    rejectUnknownKeys(options, CLEAR_KEYS, "queues.clear option");
    const batchSize = positiveInteger(options.batchSize ?? 500, "queues.clear option batchSize");
    if (options.onBatch !== undefined && typeof options.onBatch !== "function") {
      throw new ConfigurationError("queues.clear option onBatch must be a function");
    }
    return discardReadyJobs(await this.database(), this.policies, queue, batchSize, options.onBatch);
  }

  /** Queues with ready jobs or a pause: size, latency of the oldest ready job, paused or not. */
  async list(): Promise<QueueInfo[]> {
    const database = await this.database();
    return listQueues(database.db, database.clock.now());
  }
}
