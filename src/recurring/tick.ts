import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { enqueueJobs, type EnqueueRequest } from "../enqueue.js";
import type { ResolvedJobOptions } from "../job-definition.js";
import { insertRecurringExecution, isDuplicateTick, recurringExecutionExists } from "../models/recurring-execution.js";
import { deserializeArguments } from "../serialization.js";
import type { RecurringTask } from "./config.js";

/**
 * What became of one tick:
 * - `enqueued`: this call wrote the job and its execution row;
 * - `duplicate`: another scheduler had already enqueued this tick; nothing was written;
 * - `discarded`: the job's concurrency controls discarded it; no job and no execution row.
 */
export type TickOutcome = { readonly kind: "enqueued"; readonly jobId: number } | { readonly kind: "duplicate" } | { readonly kind: "discarded" };

/** The enqueue internals, as a parameter so tests can stand in for concurrency controls. */
export type EnqueueJobs = (database: Database, requests: readonly EnqueueRequest[], transaction?: Db) => Promise<ReadonlyArray<number | null>>;

/**
 * Enqueue tick `runAt` of `task`: one job scheduled at `runAt` (so it is ready at once when the
 * tick is due) and its recurring execution row, in one transaction. The unique (task_key,
 * run_at) index makes the tick happen once however many schedulers try it: a scheduler that
 * comes second either sees the row before writing anything, or — racing — has its transaction
 * fail on the index (on PostgreSQL such a failure aborts the whole transaction) and rolls back.
 * Only that precise violation means `duplicate`; any other error is thrown.
 *
 * `defaults` are the job definition's queue and priority, used where the task sets none.
 */
export async function enqueueRecurringTick(
  database: Database,
  task: RecurringTask,
  runAt: Date,
  defaults: ResolvedJobOptions,
  enqueue: EnqueueJobs = enqueueJobs,
): Promise<TickOutcome> {
  const request: EnqueueRequest = {
    name: task.job,
    args: deserializeArguments(task.arguments),
    defaults,
    options: {
      at: runAt,
      ...(task.queue !== null ? { queue: task.queue } : {}),
      ...(task.priority !== null ? { priority: task.priority } : {}),
    },
  };
  try {
    return await database.dialect.beginClaimTx(database.db, async (trx): Promise<TickOutcome> => {
      if (await recurringExecutionExists(trx, task.key, runAt)) return { kind: "duplicate" };
      const [jobId] = await enqueue(database, [request], trx);
      // Concurrency controls may discard the job: then there is no job to record the tick with.
      if (jobId === null || jobId === undefined) return { kind: "discarded" };
      await insertRecurringExecution(trx, { jobId, taskKey: task.key, runAt }, new Date());
      return { kind: "enqueued", jobId };
    });
  } catch (error) {
    if (isDuplicateTick(database.dialect.name, error)) return { kind: "duplicate" };
    throw error;
  }
}
