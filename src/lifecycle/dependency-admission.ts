import type { BulkInsert, Db } from "../database/dialect.js";
import type { JobDependencies } from "../definitions/dependency-options.js";
import { JobNotFoundError } from "../errors.js";
import { lockDependencyJobs, markHavingDependents, type DependencyJob } from "../models/dependency-jobs.js";
import { insertDependencies, type NewDependency } from "../models/job-dependency.js";
import type { DispatchContext } from "./dispatch-context.js";

/**
 * What a new job waits for: jobs already in the database (`ids`, from `dependsOn`) and, in a flow,
 * jobs written earlier in the same call (`inCall`, their places in the call's list; these come
 * after `ids` in `dependencyResults` order).
 */
export interface PlannedDependencies extends JobDependencies {
  readonly inCall?: readonly number[];
}

/** How the jobs of one enqueue start, given their dependencies. */
export interface DependencyPlan {
  /** Per job of the call: its dependencies not ended yet (above 0: it is written pending). */
  readonly unmet: readonly number[];
  /**
   * Places of jobs written cancelled at once, with the first dependency (in `dependsOn` order)
   * that had already failed or been cancelled.
   */
  readonly cancelled: ReadonlyMap<number, { readonly id: number; readonly state: "failed" | "cancelled" }>;
  readonly existing: ReadonlyMap<number, DependencyJob>;
}

/**
 * Read and lock the existing jobs the call's jobs depend on, before anything is written: an id
 * with no job is a JobNotFoundError (thrown inside the transaction, so nothing is written). Jobs
 * not ended yet are marked as having dependents. Returns null when no job of the call has
 * dependencies.
 */
export async function planDependencies(
  trx: Db,
  context: DispatchContext,
  jobs: readonly { readonly dependencies?: PlannedDependencies | null }[],
): Promise<DependencyPlan | null> {
  if (!jobs.some((job) => job.dependencies)) return null;
  const wanted = new Set<number>();
  for (const job of jobs) for (const id of job.dependencies?.ids ?? []) wanted.add(id);
  const existing = await lockDependencyJobs(trx, context.dialect, [...wanted]);
  for (const id of wanted) if (!existing.has(id)) throw new JobNotFoundError(id);
  await markHavingDependents(
    trx,
    [...existing.values()].filter((job) => job.state === null).map((job) => job.id),
  );
  const unmet: number[] = [];
  const cancelled = new Map<number, { id: number; state: "failed" | "cancelled" }>();
  for (const [index, job] of jobs.entries()) {
    const dependencies = job.dependencies;
    if (!dependencies) {
      unmet.push(0);
      continue;
    }
    let open = dependencies.inCall?.length ?? 0;
    for (const id of dependencies.ids) {
      const state = existing.get(id)!.state;
      if (state === null) open++;
      else if (state !== "finished" && dependencies.onFailure === "cancel" && !cancelled.has(index))
        cancelled.set(index, { id, state });
    }
    unmet.push(open);
  }
  return { unmet, cancelled, existing };
}

/** Write the edges of the call's jobs once they have ids (`ids`, in call order). */
export async function writeDependencies(
  trx: Db,
  plan: DependencyPlan,
  jobs: readonly { readonly className: string; readonly dependencies?: PlannedDependencies | null }[],
  ids: readonly number[],
  now: Date,
  bulk?: BulkInsert,
): Promise<void> {
  const edges: NewDependency[] = [];
  jobs.forEach((job, index) => {
    const dependencies = job.dependencies;
    if (!dependencies) return;
    const base = { jobId: ids[index]!, onFailure: dependencies.onFailure };
    let position = 0;
    for (const id of dependencies.ids) {
      const found = plan.existing.get(id)!;
      edges.push({
        ...base,
        dependencyId: id,
        position: position++,
        dependencyName: found.name,
        state: found.state,
        result: found.result,
      });
    }
    for (const place of dependencies.inCall ?? [])
      edges.push({
        ...base,
        dependencyId: ids[place]!,
        position: position++,
        dependencyName: jobs[place]!.className,
        state: null,
        result: null,
      });
  });
  await insertDependencies(trx, edges, now, bulk);
}
