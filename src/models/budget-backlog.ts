import { sql } from "kysely";
import type { Db } from "../database/dialect.js";
import { type QueueScope, scopeCondition } from "./throttled-execution.js";

/**
 * Whether a job in a queue of `scope` that is not paused waits for a rate-limit budget: one with
 * a budget of its own (the throttled table), or a ready job of a queue with a limit of its own
 * (`limitedQueues`). Two indexed existence checks.
 */
export async function jobsWaitForBudget(db: Db, scope: QueueScope, limitedQueues: readonly string[]): Promise<boolean> {
  const paused = db.selectFrom("firm_queue_pauses").select("queue_name");
  const throttled = await db
    .selectFrom("firm_queue_throttled_executions")
    .select(sql<number>`1`.as("one"))
    .where(scopeCondition(scope, "queue_name"))
    .where("queue_name", "not in", paused)
    .limit(1)
    .executeTakeFirst();
  if (throttled !== undefined) return true;
  if (limitedQueues.length === 0) return false;
  const ready = await db
    .selectFrom("firm_queue_ready_executions")
    .select(sql<number>`1`.as("one"))
    .where("queue_name", "in", limitedQueues)
    .where("queue_name", "not in", paused)
    .limit(1)
    .executeTakeFirst();
  return ready !== undefined;
}
