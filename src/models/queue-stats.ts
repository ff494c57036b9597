import { sql } from "kysely";
import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { pausedQueueNames } from "./pause.js";

/** One queue as `firm.queues.list()` shows it. */
export interface QueueInfo {
  readonly name: string;
  /** Jobs ready to be claimed. */
  readonly size: number;
  /** Milliseconds the oldest ready job has been waiting; 0 when empty. */
  readonly latency: number;
  readonly paused: boolean;
}

/** Every queue that has ready jobs or is paused, by name. */
export async function listQueues(db: Db, now: Date): Promise<QueueInfo[]> {
  const rows = await db
    .selectFrom("firm_queue_ready_executions")
    .select(["queue_name", sql<number>`COUNT(*)`.as("size"), sql<Date | string>`MIN(created_at)`.as("oldest")])
    .groupBy("queue_name")
    .execute();
  const paused = new Set(await pausedQueueNames(db));
  const queues = new Map<string, QueueInfo>();
  for (const row of rows) {
    const oldest = toDate(row.oldest);
    queues.set(row.queue_name, {
      name: row.queue_name,
      size: Number(row.size),
      latency: Math.max(0, now.getTime() - oldest.getTime()),
      paused: paused.has(row.queue_name),
    });
  }
  for (const name of paused) {
    if (!queues.has(name)) queues.set(name, { name, size: 0, latency: 0, paused: true });
  }
  return [...queues.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
