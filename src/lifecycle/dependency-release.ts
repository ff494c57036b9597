import type { Db } from "../database/dialect.js";
import type { DispatchContext } from "./dispatch-context.js";
import { lockDependents, lowerUnmetCounts } from "../models/dependency-jobs.js";
import {
  openDependenciesOf,
  recordDependencyEnds,
  type DependencyState,
  type OpenDependency,
} from "../models/job-dependency.js";
import type { JobRow } from "../models/job.js";
import { markCancelled } from "../models/job-cancellation.js";
import { releaseJobKeys } from "../models/job-key.js";
import { dispatchJobs, toDispatchable } from "./job-dispatch.js";
import { countBatchEnds } from "./batch-progress.js";

/**
 * Tell the dependents of jobs that just ended, in the transaction that ended them, and count those
 * of them that belong to a batch in it (see batch-progress.ts), at every level. Each edge
 * still open on one of `dependencyIds` is recorded with `state` (and the dependency's result, from
 * `results`), then its dependent:
 * - when the dependency finished, or failed or was cancelled and the dependent runs anyway
 *   (`onDependencyFailure: "run"`), has its count of unmet dependencies lowered; at 0 it is
 *   dispatched (ready, scheduled for its own time, or blocked on its concurrency key);
 * - otherwise is cancelled, and the same happens to its own dependents, level by level.
 * Batch memberships are looked up for `members` of `dependencyIds` only (all of them unless the
 * caller knows which can be in a batch), and for every job cancelled at a further level.
 *
 * The work is proportional to the edges of the jobs that ended (one row each, and one locked
 * dependent row), never to a dependent's other dependencies: a fan-in of 10,000 costs each finish
 * what a fan-in of 2 does. Concurrent finishes of the last two dependencies of a job both lock its
 * row (in id order), so the second reads the count the first lowered and only one sees 0.
 *
 * The dependents released and cancelled are noted in `context.moves`, told after the commit as
 * `job.dependenciesMet` and `job.dependencyCancelled`.
 */
export async function releaseDependents(
  trx: Db,
  context: DispatchContext,
  dependencyIds: readonly number[],
  state: DependencyState,
  now: Date,
  results: ReadonlyMap<number, string> | null = null,
  members: readonly number[] = dependencyIds,
): Promise<void> {
  let ended = dependencyIds;
  let endedAs = state;
  let endedResults = results;
  let mayBeMembers = members;
  while (ended.length > 0) {
    // Jobs of a batch (written with has_dependents set, so every end comes here) count in it.
    await countBatchEnds(trx, context, mayBeMembers, endedAs, now);
    const edges = await openDependenciesOf(trx, context.dialect, ended);
    if (edges.length === 0) return;
    await recordDependencyEnds(trx, edges, endedAs, endedResults);
    const met = new Map<number, number>();
    const toCancel = new Set<number>();
    for (const edge of edges) {
      if (endedAs === "finished" || edge.onFailure === "run") met.set(edge.jobId, (met.get(edge.jobId) ?? 0) + 1);
      else toCancel.add(edge.jobId);
    }
    const dependents = await lockDependents(trx, context.dialect, [...new Set(edges.map((edge) => edge.jobId))]);
    // A dependent already ended (cancelled by hand) is left as it is.
    const waiting = dependents.filter((row) => row.finished_at === null);
    const cancelled = waiting.filter((row) => toCancel.has(Number(row.id)));
    const byAmount = new Map<number, number[]>();
    const released = [];
    for (const row of waiting) {
      const id = Number(row.id);
      const amount = met.get(id);
      if (amount === undefined || toCancel.has(id)) continue;
      byAmount.set(amount, [...(byAmount.get(amount) ?? []), id]);
      if (row.unmet_dependencies - amount <= 0) released.push(row);
    }
    await lowerUnmetCounts(trx, byAmount, now);
    noteEnds(context, edges, released, cancelled, endedAs);
    // A released job dropped by its concurrency limit (onConflict "discard") never ends: its own
    // dependents take it as cancelled, with the jobs cancelled at this level.
    const discarded =
      released.length > 0
        ? (
            await dispatchJobs(
              trx,
              released.map((row) => toDispatchable(row)),
              now,
              context,
            )
          ).discarded
        : [];
    const droppedIds = new Set(discarded);
    const discardedWithDependents = released
      .filter((row) => row.has_dependents !== 0 && droppedIds.has(Number(row.id)))
      .map((row) => Number(row.id));
    const cancelledIds = cancelled.map((row) => Number(row.id));
    if (cancelledIds.length > 0) {
      await markCancelled(trx, cancelledIds, now);
      await releaseJobKeys(trx, cancelledIds, now);
      context.policies.logger.info("jobs cancelled: a job they depend on failed or was cancelled", {
        jobIds: cancelledIds,
      });
    }
    // The next level: dependents of the jobs just cancelled.
    ended = [
      ...cancelled.filter((row) => row.has_dependents !== 0).map((row) => Number(row.id)),
      ...discardedWithDependents,
    ];
    endedAs = "cancelled";
    endedResults = null;
    mayBeMembers = ended;
  }
}

/**
 * Note, for the listeners told after the commit, the dependents this level released and those it
 * cancelled, each with the dependency that cancelled it (an edge of `edges` towards it).
 */
function noteEnds(
  context: DispatchContext,
  edges: readonly OpenDependency[],
  released: readonly JobRow[],
  cancelled: readonly JobRow[],
  endedAs: DependencyState,
): void {
  const { moves } = context;
  if (moves === undefined) return;
  const told = (row: JobRow) => ({ jobId: Number(row.id), job: row.class_name, queue: row.queue_name });
  for (const row of released) moves.noteDependenciesMet(told(row));
  if (cancelled.length === 0 || endedAs === "finished") return;
  const cause = new Map<number, number>();
  for (const edge of edges) if (!cause.has(edge.jobId)) cause.set(edge.jobId, edge.dependencyId);
  for (const row of cancelled)
    moves.noteDependencyCancelled({
      ...told(row),
      dependencyId: cause.get(Number(row.id))!,
      dependencyState: endedAs,
    });
}
