import type { Database } from "./database/connection.js";
import { checkQueueName } from "./job-definition.js";
import { pauseQueue, resumeQueue } from "./models/pause.js";
import { listQueues, type QueueInfo } from "./models/queue-stats.js";

/** `firm.queues`: look at queues and pause or resume them. */
export class QueueOperations {
  constructor(private readonly database: () => Promise<Database>) {}

  /** Stop workers from claiming jobs of this queue. Jobs can still be enqueued. */
  async pause(name: string): Promise<void> {
    const { db } = await this.database();
    await pauseQueue(db, checkQueueName(name, "queue"), new Date());
  }

  /** Let workers claim from this queue again. */
  async resume(name: string): Promise<void> {
    const { db } = await this.database();
    await resumeQueue(db, checkQueueName(name, "queue"));
  }

  /** Queues with ready jobs or a pause: size, latency of the oldest ready job, paused or not. */
  async list(): Promise<QueueInfo[]> {
    const { db } = await this.database();
    return listQueues(db, new Date());
  }
}
