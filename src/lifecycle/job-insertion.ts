import type { Db } from "../database/dialect.js";
import type { JobKeyClaim } from "../definitions/unique-options.js";
import { deleteJobs, insertJobs, type DispatchableJob, type NewJob } from "../models/job.js";
import { created, DROPPED, type EnqueueResult } from "./enqueue-result.js";
import { dispatchJobs, type DispatchContext } from "./job-dispatch.js";
import { admitKeyedJobs, type KeyedJob } from "./unique-admission.js";

/** A job ready to insert, with the unique key it will try to take. */
export interface PreparedJob extends NewJob {
  readonly keyClaim: JobKeyClaim | null;
}

/**
 * Insert the jobs, settle their unique keys, and route the ones created (ready, scheduled or
 * blocked). Returns one result per job and the ids every job was inserted with (a duplicate's
 * row is deleted again in the same transaction).
 */
export async function insertAndRoute(
  trx: Db,
  jobs: readonly PreparedJob[],
  now: Date,
  context: DispatchContext,
): Promise<{ results: EnqueueResult[]; ids: number[] }> {
  const ids = await insertJobs(trx, jobs, now);
  const keyed: KeyedJob[] = [];
  jobs.forEach((job, index) => {
    if (job.keyClaim !== null)
      keyed.push({ index, id: ids[index]!, jobName: job.className, claim: job.keyClaim, ...job });
  });
  const { matched, replacedInCall } = await admitKeyedJobs(trx, context, keyed, now);
  if (matched.size > 0)
    await deleteJobs(
      trx,
      [...matched.keys()].map((index) => ids[index]!),
    );
  const toDispatch: DispatchableJob[] = [];
  for (const [index, job] of jobs.entries()) {
    if (matched.has(index)) continue;
    const replacement = replacedInCall.get(index);
    if (replacement !== undefined) await rewriteJob(trx, ids[index]!, replacement, now);
    toDispatch.push({ ...job, id: ids[index]!, scheduledAt: replacement?.scheduledAt ?? job.scheduledAt });
  }
  const { discarded } = await dispatchJobs(trx, toDispatch, now, context);
  const dropped = new Set(discarded);
  return { ids, results: ids.map((id, index) => matched.get(index) ?? (dropped.has(id) ? DROPPED : created(id))) };
}

/** A job of this call replaced by a later one of the same call (unique mode `replace`). */
async function rewriteJob(
  trx: Db,
  id: number,
  change: { readonly arguments: string; readonly scheduledAt: Date },
  now: Date,
): Promise<void> {
  await trx
    .updateTable("firm_queue_jobs")
    .set({ arguments: change.arguments, scheduled_at: change.scheduledAt, updated_at: now })
    .where("id", "=", id)
    .execute();
}
