import type { Migration, MigrationStep } from "./table-spec.js";

const JOBS = "firm_queue_jobs";
const ON_FINISHED_AT = "index_firm_queue_jobs_on_finished_at";
const FOR_ALERTING = "index_firm_queue_jobs_for_alerting";

/** SQLite and PostgreSQL: rebuild `(finished_at)` over the jobs that have ended. */
const drop = `DROP INDEX IF EXISTS ${ON_FINISHED_AT}`;
const create = `CREATE INDEX IF NOT EXISTS ${ON_FINISHED_AT} ON ${JOBS} (finished_at) WHERE finished_at IS NOT NULL`;
const overEndedJobs: MigrationStep[] = [
  { sql: { sqlite: drop, postgres: drop } },
  { sql: { sqlite: create, postgres: create } },
];

/**
 * Migration 018: of the jobs table's three indexes with `finished_at` in them, copied from Solid
 * Queue's schema by migration 001, one holds only the jobs that have ended and one is gone.
 *
 * - `(finished_at)` covers only rows with `finished_at` set, on SQLite and PostgreSQL. The queries
 *   that read it (the finished and cancelled job lists and their counts, the throughput counts,
 *   the finished-job cleanup) all ask for ended jobs, by `finished_at IS NOT NULL` or a range on
 *   it, so both databases still use it; an enqueue writes no entry into it (it wrote one with a
 *   NULL `finished_at`).
 * - `(scheduled_at, finished_at)` is dropped on every database: no query of firm-queue reads it
 *   (scheduled jobs are found through the scheduled executions table). An enqueue and a finish
 *   each wrote an entry into it.
 * - `(queue_name, finished_at)` stays over every job: besides the ended jobs of a queue it serves
 *   lookups of a queue's jobs in any state (the failed jobs of a queue, cancelling a queue's
 *   unended jobs), which SQLite's planner otherwise turns into a scan of the whole jobs table.
 * MariaDB has no partial indexes: its `(finished_at)` stays over every job.
 *
 * Recording a job finished stays a non-HOT update on PostgreSQL: a partial index's predicate
 * column counts as indexed. The rebuilt index is built again from the table's ended jobs, inside
 * `migrate`'s transaction: writes to the jobs table wait until it commits (docs/schema.md).
 */
export const endedJobIndexes: Migration = {
  version: "018_ended_job_indexes",
  steps: [
    ...overEndedJobs,
    {
      sql: {
        sqlite: `DROP INDEX IF EXISTS ${FOR_ALERTING}`,
        postgres: `DROP INDEX IF EXISTS ${FOR_ALERTING}`,
        mysql: `ALTER TABLE ${JOBS} DROP INDEX IF EXISTS ${FOR_ALERTING}`,
      },
    },
  ],
};
