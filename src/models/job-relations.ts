import type { Db } from "../database/dialect.js";
import type { BatchState } from "./batch.js";
import type { JobState } from "./job-info.js";
import { jobStates } from "./job-states.js";

/** A job that another job waits for or is waited for by, as `firm.inspect.job()` lists it. */
export interface RelatedJob {
  readonly id: number;
  readonly name: string;
  /** Its state now; `"deleted"` once its row is gone (a finished dependency cleared by cleanup). */
  readonly state: JobState | "deleted";
}

/** The jobs a job waits for and the jobs waiting for it, each list capped, with its full count. */
export interface JobRelations {
  /** The first dependencies in `dependsOn` order (a flow's children after its own `dependsOn`). */
  readonly dependencies: readonly RelatedJob[];
  /** How many dependencies the job has in all. */
  readonly dependencyCount: number;
  /** The first jobs that depend on this one, in the order they were added. */
  readonly dependents: readonly RelatedJob[];
  /** How many jobs depend on this one in all. */
  readonly dependentCount: number;
}

/** The batch a job belongs to, or whose callback it is. */
export interface JobBatchLink {
  readonly id: number;
  /** The batch's state; `"deleted"` once its row is gone. */
  readonly state: BatchState | "deleted";
  /** True for a callback the batch enqueued when it ended (`onSuccess`, `onFailure`, `onFinish`), false for one of its jobs. */
  readonly callback: boolean;
}

/**
 * The dependencies and dependents of `jobId`, at most `limit` of each. Each list is one range of
 * an index of the dependencies table (by dependent and place, or by dependency), and is counted
 * only when it fills its page, so a job with 10,000 dependents costs `limit` rows plus one count
 * over its own index entries; the states are looked up for the listed jobs alone.
 */
export async function findJobRelations(db: Db, jobId: number, limit: number): Promise<JobRelations> {
  const [dependencyRows, dependentRows] = await Promise.all([
    db
      .selectFrom("firm_queue_job_dependencies")
      .select(["dependency_id as id", "dependency_name as name"])
      .where("job_id", "=", jobId)
      .orderBy("position")
      .limit(limit)
      .execute(),
    // A dependent's edge goes with its row (a foreign key with cascade), so the join finds every one.
    db
      .selectFrom("firm_queue_job_dependencies as d")
      .innerJoin("firm_queue_jobs as j", "j.id", "d.job_id")
      .select(["d.job_id as id", "j.class_name as name"])
      .where("d.dependency_id", "=", jobId)
      .orderBy("d.id")
      .limit(limit)
      .execute(),
  ]);
  const [dependencyCount, dependentCount, states] = await Promise.all([
    dependencyRows.length < limit ? dependencyRows.length : countEdges(db, "job_id", jobId),
    dependentRows.length < limit ? dependentRows.length : countEdges(db, "dependency_id", jobId),
    jobStates(db, [...new Set([...dependencyRows, ...dependentRows].map((row) => Number(row.id)))]),
  ]);
  const related = (rows: ReadonlyArray<{ id: number; name: string }>): RelatedJob[] =>
    rows.map((row) => ({ id: Number(row.id), name: row.name, state: states.get(Number(row.id)) ?? "deleted" }));
  return {
    dependencies: related(dependencyRows),
    dependencyCount,
    dependents: related(dependentRows),
    dependentCount,
  };
}

async function countEdges(db: Db, column: "job_id" | "dependency_id", jobId: number): Promise<number> {
  const row = await db
    .selectFrom("firm_queue_job_dependencies")
    .select((eb) => eb.fn.countAll<number | string>().as("count"))
    .where(column, "=", jobId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The batch of `jobId`, if it has one: the job's `batch_id`, that batch's state and whether the job
 * is one of its jobs (a membership row, looked up by its unique `job_id`) or its callback. Undefined
 * for a job in no batch (or no job).
 */
export async function findJobBatch(db: Db, jobId: number): Promise<JobBatchLink | undefined> {
  const row = await db
    .selectFrom("firm_queue_jobs as j")
    .leftJoin("firm_queue_batches as b", "b.id", "j.batch_id")
    .leftJoin("firm_queue_batch_jobs as m", "m.job_id", "j.id")
    .select(["j.batch_id", "b.state", "m.id as member"])
    .where("j.id", "=", jobId)
    .executeTakeFirst();
  if (row === undefined || row.batch_id === null) return undefined;
  return {
    id: Number(row.batch_id),
    state: (row.state ?? "deleted") as BatchState | "deleted",
    callback: row.member === null,
  };
}
