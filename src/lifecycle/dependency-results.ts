import type { Db } from "../database/dialect.js";
import type { DependencyResult } from "../definitions/job-definition.js";
import { dependencyRows } from "../models/job-dependency.js";
import { readableArguments } from "../serialization.js";

/** `context.dependencyResults()`: a job's dependencies in `dependsOn` order, results decoded. */
export async function readDependencyResults(db: Db, jobId: number): Promise<DependencyResult[]> {
  const rows = await dependencyRows(db, jobId);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    state: row.state,
    result: row.result === null ? null : readableArguments(row.result),
  }));
}
