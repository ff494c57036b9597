import type { Db } from "../database/dialect.js";
import type { DispatchContext } from "./dispatch-context.js";
import { dispatchJobs, toDispatchable } from "./job-dispatch.js";
import { releaseSemaphoresForRequeue, slotHolderOf } from "./semaphore-release.js";

/**
 * Replace a waiting job's arguments and run time (a unique key in mode `replace`): take it out
 * of line (its ready, scheduled or blocked row), give back the concurrency slot a ready job held,
 * write the new arguments and time, and dispatch it again, keeping its id. Returns false, changing
 * nothing, when the job was not waiting (a worker claimed it meanwhile): the caller then treats
 * it as running. The DELETEs take the rows' locks, so a concurrent claim and this cannot both win.
 */
export async function replaceWaitingJob(
  trx: Db,
  context: DispatchContext,
  jobId: number,
  change: { readonly arguments: string; readonly scheduledAt: Date },
  now: Date,
): Promise<boolean> {
  // A job waiting for rate-limit budget holds its concurrency slot like a ready one.
  const ready =
    (await deleted(trx.deleteFrom("firm_queue_ready_executions").where("job_id", "=", jobId))) +
    (await deleted(trx.deleteFrom("firm_queue_throttled_executions").where("job_id", "=", jobId)));
  const scheduled = await deleted(trx.deleteFrom("firm_queue_scheduled_executions").where("job_id", "=", jobId));
  const blocked = await deleted(trx.deleteFrom("firm_queue_blocked_executions").where("job_id", "=", jobId));
  if (ready + scheduled + blocked === 0) return false;
  const row = await trx.selectFrom("firm_queue_jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
  if (ready > 0 && row.concurrency_key !== null) {
    await releaseSemaphoresForRequeue(trx, context, [slotHolderOf(row)], now);
  }
  await trx
    .updateTable("firm_queue_jobs")
    .set({ arguments: change.arguments, scheduled_at: change.scheduledAt, updated_at: now })
    .where("id", "=", jobId)
    .execute();
  await dispatchJobs(trx, [{ ...toDispatchable(row), scheduledAt: change.scheduledAt }], now, context);
  return true;
}

async function deleted(query: { executeTakeFirst(): Promise<{ numDeletedRows: bigint }> }): Promise<number> {
  return Number((await query.executeTakeFirst()).numDeletedRows);
}
