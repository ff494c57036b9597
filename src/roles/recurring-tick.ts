import type { Database } from "../database/connection.js";
import type { Db } from "../database/dialect.js";
import { enqueueJobs, type EnqueueRequest } from "../lifecycle/enqueue.js";
import type { EnqueueResult } from "../lifecycle/enqueue-result.js";
import type { ResolvedJobOptions } from "../definitions/job-definition.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { insertRecurringExecution, isDuplicateTick } from "../models/recurring-execution.js";
import { takeRecurringTick } from "../models/recurring-task.js";
import { deserializeArguments } from "../serialization.js";
import type { RecurringTask } from "../definitions/recurring-task.js";

/**
 * What became of one tick:
 * - `enqueued`: this call wrote the job and its execution row;
 * - `duplicate`: another scheduler had already enqueued this tick; nothing was written;
 * - `discarded`: the job's concurrency controls discarded it; no job and no execution row;
 * - `removed`: the task is no longer in the table (unscheduled, or dropped from the
 *   configuration by a newer scheduler's sync); nothing was written.
 */
export type TickOutcome =
  | { readonly kind: "enqueued"; readonly jobId: number }
  | { readonly kind: "duplicate" }
  | { readonly kind: "discarded" }
  | { readonly kind: "removed" };

/** The enqueue internals, as a parameter so tests can stand in for concurrency controls. */
export type EnqueueJobs = (
  database: Database,
  policies: JobPolicies,
  requests: readonly EnqueueRequest[],
  transaction?: Db,
) => Promise<ReadonlyArray<EnqueueResult>>;

/**
 * Enqueue tick `runAt` of `task`: one job scheduled at `runAt` (so it is ready at once when the
 * tick is due) and its recurring execution row, in one transaction. Two guards make the tick
 * happen once however many schedulers try it:
 * - the transaction first advances the task's `last_run_at` mark to `runAt`; that locks the
 *   task row, so a second scheduler waits, then finds the tick taken and writes nothing. The mark
 *   outlives the job, which may be deleted when it finishes;
 * - the unique (task_key, run_at) index on executions backs that up (a task row deleted and
 *   recreated starts with no mark): a scheduler whose insert hits it has its transaction fail —
 *   on PostgreSQL the failure aborts it whole — and rolled back. Only that precise violation
 *   means `duplicate`; any other error is thrown.
 *
 * `defaults` are the job definition's queue and priority, used where the task sets none;
 * `policies` apply the job's concurrency controls, which may discard the tick's job.
 */
export async function enqueueRecurringTick(
  database: Database,
  policies: JobPolicies,
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
    return await database.claimTransaction(async (trx): Promise<TickOutcome> => {
      const mark = await takeRecurringTick(trx, task.key, runAt);
      if (mark === "done") return { kind: "duplicate" };
      if (mark === "missing") return { kind: "removed" };
      const [result] = await enqueue(database, policies, [request], trx);
      // Concurrency controls may drop the job, or its unique key match an existing one: the tick
      // has fired (its mark stays, so other schedulers do not try it again) but there is no new
      // job to record it with.
      if (result === undefined || result.status !== "created") return { kind: "discarded" };
      const jobId = result.id;
      await insertRecurringExecution(trx, { jobId, taskKey: task.key, runAt }, database.clock.now());
      return { kind: "enqueued", jobId };
    });
  } catch (error) {
    if (isDuplicateTick(database.dialect, error)) return { kind: "duplicate" };
    throw error;
  }
}
