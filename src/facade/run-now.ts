import type { Database } from "../database/connection.js";
import { enqueueJobs } from "../lifecycle/enqueue.js";
import { RecurringTaskError, RecurringTaskNotFoundError } from "../errors.js";
import type { ResolvedJobOptions } from "../definitions/job-definition.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import { insertRecurringExecution } from "../models/recurring-execution.js";
import { listRecurringTaskRows, taskFieldsOf } from "../models/recurring-task.js";
import { deserializeArguments } from "../serialization.js";

/** What `runNow` needs from its FirmQueue: the job's defaults and concurrency controls. */
export interface RunNowContext {
  readonly policies: JobPolicies;
  readonly defaultsOf: (jobName: string) => ResolvedJobOptions;
}

/**
 * Enqueue a task's job now, outside its schedule: the task's job, arguments, queue and priority,
 * through the ordinary enqueue path (so concurrency controls apply), recorded as a run of the
 * task at this moment. The schedule's own ticks are untouched: the task's last-tick mark does
 * not move, so the next scheduled tick still runs. Returns the job id, or null when the job's
 * concurrency controls dropped it.
 */
export async function runRecurringTaskNow(
  database: Database,
  context: RunNowContext,
  key: string,
): Promise<number | null> {
  const row = (await listRecurringTaskRows(database.db)).find((candidate) => candidate.key === key);
  if (!row) throw new RecurringTaskNotFoundError(key);
  const task = taskFieldsOf(row);
  if (task.job === "") throw new RecurringTaskError(key, "the stored task names no job (class_name is empty)");
  const request = {
    name: task.job,
    args: deserializeArguments(row.arguments ?? "null"),
    defaults: context.defaultsOf(task.job),
    options: {
      ...(task.queue !== null ? { queue: task.queue } : {}),
      ...(task.priority !== null ? { priority: task.priority } : {}),
    },
  };
  return database.claimTransaction(async (trx) => {
    const now = new Date();
    const [result] = await enqueueJobs(database, context.policies, [request], trx);
    if (result === undefined || result.status !== "created") return null;
    const jobId = result.id;
    await insertRecurringExecution(trx, { jobId, taskKey: key, runAt: now }, now);
    return jobId;
  });
}
