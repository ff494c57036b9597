import type { Db } from "../../src/database/dialect.js";
import { countRows } from "./harness.js";

/** The recurring task of test/fixtures/ha.config.ts, ticking every second. */
const TICK_TASK = "ha-tick";

/** Jobs not finished yet. */
export async function unfinishedJobs(db: Db): Promise<number> {
  const row = await db
    .selectFrom("firm_queue_jobs")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("finished_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * After the final stop: no claim, no process row, every key's slots back. (Ready jobs may be
 * left: a tick enqueued in the last second before the scheduler stopped.)
 */
export async function leftBehind(db: Db, keyLimit: number): Promise<string[]> {
  const found: string[] = [];
  for (const table of [
    "firm_queue_claimed_executions",
    "firm_queue_processes",
    "firm_queue_failed_executions",
  ] as const) {
    const count = await countRows(db, table);
    if (count > 0) found.push(`${count} rows left in ${table}`);
  }
  for (const row of await db.selectFrom("firm_queue_semaphores").select(["key", "value"]).execute())
    if (Number(row.value) !== keyLimit) found.push(`semaphore ${row.key} has ${row.value} free slots of ${keyLimit}`);
  return found;
}

/**
 * The ticks the new primary recorded: how many, how many seconds between the first and the last
 * have none (lost ticks), and how many tick jobs started more than once (doubled runs).
 */
export async function tickGaps(
  db: Db,
  startsOf: (job: number) => number,
): Promise<{ count: number; missing: number; doubled: number }> {
  const rows = await db
    .selectFrom("firm_queue_recurring_executions")
    .select(["run_at", "job_id"])
    .where("task_key", "=", TICK_TASK)
    .orderBy("run_at")
    .execute();
  const seconds = rows.map((row) => Math.round(new Date(row.run_at as Date).getTime() / 1000));
  const distinct = new Set(seconds);
  const span = seconds.length === 0 ? 0 : seconds[seconds.length - 1]! - seconds[0]! + 1;
  return {
    count: rows.length,
    missing: span - distinct.size,
    doubled: rows.filter((row) => startsOf(Number(row.job_id)) > 1).length + (seconds.length - distinct.size),
  };
}

/** How many times each job started, from the run log's `start` lines. */
export function startCounts(lines: readonly string[]): (job: number) => number {
  const counts = new Map<number, number>();
  for (const line of lines) {
    if (!line.startsWith("start ")) continue;
    const job = Number(line.split(" ")[1]);
    counts.set(job, (counts.get(job) ?? 0) + 1);
  }
  return (job) => counts.get(job) ?? 0;
}

/**
 * Jobs of the run that never ran to the end: every chaos job, and every tick that finished (a
 * tick enqueued in the moment between the drain and the stop is left ready, rightly).
 */
export async function jobsNeverRun(db: Db, succeeded: ReadonlySet<number>): Promise<string | null> {
  const rows = await db
    .selectFrom("firm_queue_jobs")
    .select(["id", "class_name", "finished_at", "queue_name"])
    .execute();
  const lost = rows.filter(
    (row) => !succeeded.has(Number(row.id)) && (row.class_name !== TICK_TASK || row.finished_at !== null),
  );
  return lost.length === 0 ? null : `${lost.length} jobs never ran to the end: ${JSON.stringify(lost.slice(0, 10))}`;
}
