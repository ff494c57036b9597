import type { Migration, TableSpec } from "./table-spec.js";

/**
 * One row per dependency of a job (`dependsOn`): `job_id` waits for `dependency_id`. Looked up by
 * `dependency_id` when that job ends (so a finish reads only its own edges, never its siblings'),
 * and by `job_id` for `context.dependencyResults()`. The dependency's name, how it ended and its
 * result are copied onto the row when it ends, so a dependency deleted afterwards (cleanup, or
 * finished jobs not kept) still answers `dependencyResults`. There is no foreign key on
 * `dependency_id` for that reason; deleting the dependent deletes its rows.
 */
const jobDependencies: TableSpec = {
  name: "firm_queue_job_dependencies",
  columns: {
    id: { kind: "id" },
    job_id: { kind: "reference", notNull: true },
    dependency_id: { kind: "reference", notNull: true },
    /** The dependency's place in the dependent's `dependsOn` list, from 0. */
    position: { kind: "integer", notNull: true },
    /** The dependent's `onDependencyFailure`: `cancel` or `run`. */
    on_failure: { kind: "string", notNull: true, length: 16 },
    dependency_name: { kind: "string", notNull: true },
    /** Null while the dependency has not ended; then `finished`, `failed` or `cancelled`. */
    dependency_state: { kind: "string", length: 16 },
    /** JSON of what the dependency's handler returned, copied when it finished. */
    result: { kind: "longText" },
    created_at: { kind: "timestamp", notNull: true },
  },
  indexes: [
    { name: "index_firm_queue_job_dependencies_on_job_id", columns: ["job_id", "position"], unique: true },
    { name: "index_firm_queue_job_dependencies_on_dependency_id", columns: ["dependency_id"] },
  ],
  foreignKeys: [{ column: "job_id", references: "firm_queue_jobs (id)", onDeleteCascade: true }],
};

const PENDING_INDEX =
  "CREATE INDEX IF NOT EXISTS index_firm_queue_jobs_pending ON firm_queue_jobs (id) WHERE unmet_dependencies > 0";

/** `ALTER TABLE firm_queue_jobs ADD COLUMN …` on every database. */
function addIntegerColumn(column: string) {
  return {
    sql: {
      sqlite: `ALTER TABLE firm_queue_jobs ADD COLUMN ${column} INTEGER NOT NULL DEFAULT 0`,
      postgres: `ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS ${column} INTEGER NOT NULL DEFAULT 0`,
      mysql: `ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS ${column} INT NOT NULL DEFAULT 0`,
    },
  };
}

/**
 * Migration 012: workflows. `firm_queue_jobs.unmet_dependencies` counts the dependencies of a job
 * that have not ended yet (a job with a count above 0 is `pending`, in no execution table); each
 * dependency's end lowers it by one, so releasing the last dependent of a fan-in costs the same as
 * the first. `firm_queue_jobs.has_dependents` (0 or 1) is set when a first dependent is added, so a
 * finish of a job without dependents never looks at the dependencies table.
 */
export const addJobDependencies: Migration = {
  version: "012_add_job_dependencies",
  steps: [
    addIntegerColumn("unmet_dependencies"),
    addIntegerColumn("has_dependents"),
    { createTable: jobDependencies },
    // Listing pending jobs (dashboard, inspect): the entries are only those of pending jobs, so a
    // job without dependencies writes none. MariaDB has no partial indexes: it scans instead.
    {
      sql: {
        sqlite: PENDING_INDEX,
        postgres: PENDING_INDEX,
      },
    },
  ],
};
