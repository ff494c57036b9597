import type { Db } from "../database/dialect.js";

/** Pause a queue: workers stop claiming from it; jobs keep arriving. Pausing twice is harmless. */
export async function pauseQueue(db: Db, queueName: string, now: Date): Promise<void> {
  const existing = await db
    .selectFrom("firm_queue_pauses")
    .select("id")
    .where("queue_name", "=", queueName)
    .executeTakeFirst();
  if (existing) return;
  try {
    await db.insertInto("firm_queue_pauses").values({ queue_name: queueName, created_at: now }).execute();
  } catch (error) {
    // Another process paused it between our check and our insert: the queue is paused either way.
    const again = await db
      .selectFrom("firm_queue_pauses")
      .select("id")
      .where("queue_name", "=", queueName)
      .executeTakeFirst();
    if (!again) throw error;
  }
}

/** Resume a paused queue. Resuming a queue that is not paused is harmless. */
export async function resumeQueue(db: Db, queueName: string): Promise<void> {
  await db.deleteFrom("firm_queue_pauses").where("queue_name", "=", queueName).execute();
}

/** Names of the paused queues. */
export async function pausedQueueNames(db: Db): Promise<string[]> {
  const rows = await db.selectFrom("firm_queue_pauses").select("queue_name").orderBy("queue_name").execute();
  return rows.map((row) => row.queue_name);
}
