import type { Db } from "../database/dialect.js";
import type { JobKeyClaim } from "../definitions/unique-options.js";
import { deleteJobs, insertJobs, type DispatchableJob, type NewJob } from "../models/job.js";
import { created, DROPPED, type EnqueueResult } from "./enqueue-result.js";
import { dispatchJobs, type DispatchContext } from "./job-dispatch.js";
import { admitKeyedJobs, type KeyedJob } from "./unique-admission.js";
import { planDependencies, writeDependencies, type PlannedDependencies } from "./dependency-admission.js";
import { markCancelled } from "../models/job-cancellation.js";
import { releaseJobKeys } from "../models/job-key.js";
import { releaseDependents } from "./dependency-release.js";
import { insertBatchJobs } from "../models/batch-job.js";

/** A job ready to insert, with the unique key it will try to take and the jobs it waits for. */
export interface PreparedJob extends NewJob {
  readonly keyClaim: JobKeyClaim | null;
  /** What the job waits for (`dependsOn`, or its children in a flow); absent or null: nothing. */
  readonly dependencies?: PlannedDependencies | null;
}

/**
 * Insert the jobs, settle their unique keys, and route the ones created (ready, scheduled or
 * blocked). Returns one result per job and the ids every job was inserted with (a duplicate's
 * row is deleted again in the same transaction), and the ids of jobs that ended as they were
 * written (cancelled: a dependency had failed; or dropped by their concurrency limit). Jobs of a
 * batch (`batchId`, the same for every job of a call) are recorded as its members; counting the
 * ones that ended at once is the caller's, once the batch's counts include the new jobs.
 */
export async function insertAndRoute(
  trx: Db,
  jobs: readonly PreparedJob[],
  now: Date,
  context: DispatchContext,
): Promise<{ results: EnqueueResult[]; ids: number[]; endedAtInsert: number[] }> {
  // Dependencies are read and locked before anything is written: an unknown id writes nothing.
  const plan = await planDependencies(trx, context, jobs);
  // Jobs that others of the same call wait for (a flow's children) are written marked, so their end releases them.
  const awaited = new Set<number>();
  for (const job of jobs) for (const place of job.dependencies?.inCall ?? []) awaited.add(place);
  const ids = await insertJobs(
    trx,
    plan === null
      ? jobs
      : jobs.map((job, index) => ({
          ...job,
          unmetDependencies: plan.unmet[index]!,
          ...(awaited.has(index) ? { hasDependents: true } : {}),
        })),
    now,
    context.dialect.bulkInsert,
  );
  if (plan !== null) await writeDependencies(trx, plan, jobs, ids, now, context.dialect.bulkInsert);
  const batchId = jobs[0]?.batchId ?? null;
  if (batchId !== null) await insertBatchJobs(trx, batchId, ids, now, context.dialect.bulkInsert);
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
  const cancelled: number[] = [];
  for (const [index, job] of jobs.entries()) {
    if (matched.has(index)) continue;
    // A job that waits (pending) or whose dependency already failed is not put in line.
    const cancelledBy = plan?.cancelled.get(index);
    const told = { jobId: ids[index]!, job: job.className, queue: job.queueName };
    if (cancelledBy !== undefined) {
      cancelled.push(ids[index]!);
      context.moves?.noteDependencyCancelled({
        ...told,
        dependencyId: cancelledBy.id,
        dependencyState: cancelledBy.state,
      });
      continue;
    }
    if (plan !== null && plan.unmet[index]! > 0) {
      context.moves?.notePending({ ...told, dependencies: plan.unmet[index]! });
      continue;
    }
    const replacement = replacedInCall.get(index);
    if (replacement !== undefined) await rewriteJob(trx, ids[index]!, replacement, now);
    toDispatch.push({ ...job, id: ids[index]!, scheduledAt: replacement?.scheduledAt ?? job.scheduledAt });
  }
  if (cancelled.length > 0) {
    await markCancelled(trx, cancelled, now);
    await releaseJobKeys(trx, cancelled, now);
  }
  const { discarded } = await dispatchJobs(trx, toDispatch, now, context);
  const dropped = new Set(discarded);
  // A flow's child dropped by its concurrency limit never ends: its parents take it as cancelled.
  const droppedAwaited = ids.filter((id, index) => awaited.has(index) && dropped.has(id));
  if (droppedAwaited.length > 0) await releaseDependents(trx, context, droppedAwaited, "cancelled", now);
  return {
    ids,
    results: ids.map((id, index) => matched.get(index) ?? (dropped.has(id) ? DROPPED : created(id))),
    endedAtInsert: [...cancelled, ...discarded],
  };
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
