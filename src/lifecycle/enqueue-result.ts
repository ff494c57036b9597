/**
 * What one enqueue did, the same shape from every enqueue form (`job.enqueue`, `enqueueAll`,
 * `firm.enqueue`). `id` names the job the call produced or matched:
 * - `created`: a new job was written;
 * - `duplicate`: the job's unique key was held, so nothing was written; `id` is the job holding it;
 * - `replaced`: the key was held by a waiting job in mode `replace`, whose arguments and run time
 *   were replaced; `id` is that job;
 * - `dropped`: the job's concurrency key had no free slot and its definition drops jobs on
 *   conflict; nothing was written and there is no id.
 */
export type EnqueueResult = EnqueuedJob | DroppedJob;

/** An enqueue that produced or matched a job: every status but `dropped`. */
export type EnqueuedJob =
  | { readonly status: "created"; readonly id: number }
  | { readonly status: "duplicate"; readonly id: number }
  | { readonly status: "replaced"; readonly id: number };

/** An enqueue dropped by its concurrency limit (a definition with `onConflict: "discard"`). */
export interface DroppedJob {
  readonly status: "dropped";
  readonly id: null;
}

/** The result for a new job. */
export function created(id: number): EnqueuedJob {
  return { status: "created", id };
}

/** The one dropped result (there is nothing to tell apart). */
export const DROPPED: DroppedJob = Object.freeze({ status: "dropped", id: null });
