import { sql } from "kysely";
import type { BulkInsert, Db, Dialect } from "../database/dialect.js";
import type { DependencyFailurePolicy } from "../definitions/dependency-options.js";
import type { EdgeInsert } from "../database/insert-rows.js";

/** How a dependency ended, as its dependents see it. */
export type DependencyState = "finished" | "failed" | "cancelled";

/** One edge to write: `jobId` waits for `dependencyId`. */
export interface NewDependency extends EdgeInsert {
  readonly jobId: number;
  readonly dependencyId: number;
  readonly position: number;
  readonly onFailure: DependencyFailurePolicy;
  readonly dependencyName: string;
  /** Set when the dependency had already ended when the edge was written. */
  readonly state: DependencyState | null;
  readonly result: string | null;
}

/** An edge waiting for its dependency to end. */
export interface OpenDependency {
  readonly id: number;
  readonly jobId: number;
  readonly dependencyId: number;
  readonly onFailure: DependencyFailurePolicy;
}

/** Rows (and ids in IN lists) per statement: keeps every database under its parameter limit. */
const CHUNK = 1000;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/** Insert edges: one multi-row INSERT per 500 (the parameter limits allow no more), or the dialect's one statement (`bulk`). */
export async function insertDependencies(
  trx: Db,
  edges: readonly NewDependency[],
  now: Date,
  bulk?: BulkInsert,
): Promise<void> {
  if (bulk !== undefined && edges.length > 1) return bulk.dependencies(trx, edges, now);
  for (const chunk of chunks(edges, 500)) {
    await trx
      .insertInto("firm_queue_job_dependencies")
      .values(
        chunk.map((edge) => ({
          job_id: edge.jobId,
          dependency_id: edge.dependencyId,
          position: edge.position,
          on_failure: edge.onFailure,
          dependency_name: edge.dependencyName,
          dependency_state: edge.state,
          result: edge.result,
          created_at: now,
        })),
      )
      .execute();
  }
}

/**
 * The edges still waiting on any of `dependencyIds`, locked until the transaction ends (an edge is
 * counted once: its state is set in the same transaction, by {@link recordDependencyEnds}).
 */
export async function openDependenciesOf(
  trx: Db,
  dialect: Dialect,
  dependencyIds: readonly number[],
): Promise<OpenDependency[]> {
  const edges: OpenDependency[] = [];
  for (const chunk of chunks(dependencyIds)) {
    const rows = await dialect
      .withRowLock(
        trx
          .selectFrom("firm_queue_job_dependencies")
          .select(["id", "job_id", "dependency_id", "on_failure"])
          .where("dependency_id", "in", chunk)
          .where("dependency_state", "is", null),
      )
      .execute();
    for (const row of rows)
      edges.push({
        id: Number(row.id),
        jobId: Number(row.job_id),
        dependencyId: Number(row.dependency_id),
        onFailure: row.on_failure as DependencyFailurePolicy,
      });
  }
  return edges;
}

/**
 * Record on `edges` that their dependencies ended in `state`, with each dependency's result
 * (`results`, by dependency id) copied beside it: one UPDATE per 500 edges.
 */
export async function recordDependencyEnds(
  trx: Db,
  edges: readonly OpenDependency[],
  state: DependencyState,
  results: ReadonlyMap<number, string> | null,
): Promise<void> {
  for (const chunk of chunks(edges, 500)) {
    const withResult = results === null ? [] : chunk.filter((edge) => results.has(edge.dependencyId));
    const result =
      withResult.length === 0
        ? sql<string | null>`NULL`
        : sql<string | null>`CASE id ${sql.join(
            withResult.map((edge) => sql`WHEN ${edge.id} THEN ${results!.get(edge.dependencyId)!}`),
            sql` `,
          )} ELSE NULL END`;
    await trx
      .updateTable("firm_queue_job_dependencies")
      .set({ dependency_state: state, result })
      .where(
        "id",
        "in",
        chunk.map((edge) => edge.id),
      )
      .execute();
  }
}

/** A dependency as `context.dependencyResults()` reports it. */
export interface DependencyResultRow {
  readonly id: number;
  readonly name: string;
  /** How it ended; null while it has not (only a job cancelled or run by hand sees that). */
  readonly state: DependencyState | null;
  /** JSON of what it returned, if it finished and returned something. */
  readonly result: string | null;
}

/** The dependencies of `jobId` in `dependsOn` order. */
export async function dependencyRows(db: Db, jobId: number): Promise<DependencyResultRow[]> {
  const rows = await db
    .selectFrom("firm_queue_job_dependencies")
    .select(["dependency_id", "dependency_name", "dependency_state", "result"])
    .where("job_id", "=", jobId)
    .orderBy("position")
    .execute();
  return rows.map((row) => ({
    id: Number(row.dependency_id),
    name: row.dependency_name,
    state: row.dependency_state as DependencyState | null,
    result: row.result,
  }));
}
