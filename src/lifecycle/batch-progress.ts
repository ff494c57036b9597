import type { Db } from "../database/dialect.js";
import { endBatchJobs, type BatchJobEnd } from "../models/batch-job.js";
import { lockBatches, writeBatchCounts, writeCallbacks, type BatchRow, type BatchState } from "../models/batch.js";
import { insertJobs, type NewJob } from "../models/job.js";
import type { DispatchContext } from "./dispatch-context.js";
import { dispatchJobs } from "./job-dispatch.js";

/** A batch callback as stored with its batch: the job to enqueue, worked out when the batch was written. */
export interface StoredCallback {
  readonly name: string;
  /** JSON text of its arguments. */
  readonly arguments: string;
  readonly queue: string;
  readonly priority: number;
  readonly concurrencyKey: string | null;
  readonly rateLimitKey: string | null;
}

/** The callbacks of a batch, as its `callbacks` column holds them (JSON). */
export interface BatchCallbacks {
  readonly onSuccess?: StoredCallback;
  readonly onFailure?: StoredCallback;
  readonly onFinish?: StoredCallback;
  /** Ids of the callback jobs written when the batch ended (absent before it ends). */
  readonly called?: readonly number[];
}

/**
 * Count the ends of jobs in their batches, in the transaction that ended them (`state`: how they
 * ended; a retry is not an end and never comes here). Each job counts once (its membership row
 * goes from open to `state`); then each batch touched is locked, in id order, its pending count
 * lowered and its outcome count raised. The transaction that brings a batch's pending count to 0
 * marks it ended and enqueues its callbacks: ends on different workers queue on the batch's row
 * lock, so only one of them sees 0, and the callbacks are written once.
 *
 * The work is the ended jobs' own membership rows and one row per batch, never the batch's other
 * jobs. Jobs in no batch cost one lookup of the unique `job_id` index.
 */
export async function countBatchEnds(
  trx: Db,
  context: DispatchContext,
  jobIds: readonly number[],
  state: BatchJobEnd,
  now: Date,
): Promise<void> {
  if (jobIds.length === 0) return;
  const ended = await endBatchJobs(trx, context.dialect, jobIds, state);
  if (ended.size === 0) return;
  for (const batch of await lockBatches(trx, context.dialect, [...ended.keys()])) {
    const count = ended.get(batch.id)!;
    const counts = {
      total: batch.total,
      pending: batch.pending - count,
      finished: batch.finished + (state === "finished" ? count : 0),
      failed: batch.failed + (state === "failed" ? count : 0),
      cancelled: batch.cancelled + (state === "cancelled" ? count : 0),
    };
    const endsNow = counts.pending <= 0 && batch.state === "pending";
    const final: BatchState | null = endsNow
      ? counts.failed > 0
        ? "failed"
        : counts.cancelled > 0
          ? "cancelled"
          : "finished"
      : null;
    await writeBatchCounts(trx, batch.id, counts, now, final);
    if (final === null) continue;
    const callbackJobIds = await enqueueCallbacks(trx, context, batch, final, now);
    context.moves?.noteBatchEnded({
      batchId: batch.id,
      state: final,
      total: counts.total,
      finished: counts.finished,
      failed: counts.failed,
      cancelled: counts.cancelled,
      callbackJobIds,
    });
  }
}

/**
 * Write the callbacks a batch that just ended as `final` calls for: `onFinish` always, `onSuccess`
 * when every job finished, `onFailure` when one failed for good. Each carries the batch's id (its
 * handler's `context.batch.id`) but is not one of its jobs. Their ids are kept with the batch's
 * callbacks, so the cleanup keeps the batch while one of them has not ended (it may read the
 * batch). Returns their ids.
 */
async function enqueueCallbacks(
  trx: Db,
  context: DispatchContext,
  batch: BatchRow,
  final: BatchState,
  now: Date,
): Promise<number[]> {
  const callbacks = JSON.parse(batch.callbacks) as BatchCallbacks;
  const due = [
    final === "finished" ? callbacks.onSuccess : undefined,
    final === "failed" ? callbacks.onFailure : undefined,
    callbacks.onFinish,
  ].filter((callback) => callback !== undefined);
  if (due.length === 0) return [];
  const jobs: NewJob[] = due.map((callback) => ({
    queueName: callback.queue,
    className: callback.name,
    arguments: callback.arguments,
    priority: callback.priority,
    scheduledAt: now,
    concurrencyKey: callback.concurrencyKey,
    rateLimitKey: callback.rateLimitKey,
    batchId: batch.id,
  }));
  const ids = await insertJobs(trx, jobs, now);
  await writeCallbacks(trx, batch.id, JSON.stringify({ ...callbacks, called: ids } satisfies BatchCallbacks));
  await dispatchJobs(
    trx,
    jobs.map((job, index) => ({ ...job, id: ids[index]! })),
    now,
    context,
  );
  context.policies.logger.info("batch ended: callbacks enqueued", {
    batchId: batch.id,
    state: final,
    callbacks: due.map((callback) => callback.name),
    jobIds: ids,
  });
  return ids;
}
