import type { Migration, MigrationStep } from "./table-spec.js";

/** Rebuild `index` on `column` of the jobs table over the rows where the column is set. */
function partial(index: string, column: string): MigrationStep[] {
  const create = `CREATE INDEX IF NOT EXISTS ${index} ON firm_queue_jobs (${column}) WHERE ${column} IS NOT NULL`;
  const drop = `DROP INDEX IF EXISTS ${index}`;
  return [{ sql: { sqlite: drop, postgres: drop } }, { sql: { sqlite: create, postgres: create } }];
}

/**
 * Migration 010: the jobs table's indexes on `active_job_id` (never written by firm-queue, kept
 * from Solid Queue's schema for applications that fill it) and `job_key` (set only for unique
 * jobs) cover only the rows where the column is set. Every job used to add an entry to both when
 * it was inserted, and again on each update that cannot be HOT (recording it finished), all NULL;
 * now neither is touched for a job without them (bench/results/history.md, "Partial indexes"). A lookup
 * by key (`job_key = …`) implies the column is set, so both databases still use the index for it.
 * MariaDB has no partial indexes: nothing changes there.
 */
export const partialJobIndexes: Migration = {
  version: "010_partial_job_indexes",
  steps: [
    ...partial("index_firm_queue_jobs_on_active_job_id", "active_job_id"),
    ...partial("index_firm_queue_jobs_on_job_key", "job_key"),
  ],
};
