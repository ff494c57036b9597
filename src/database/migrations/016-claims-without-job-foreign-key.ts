import type { Migration, MigrationStep } from "./table-spec.js";

const CLAIMS = "firm_queue_claimed_executions";
const REBUILT = `${CLAIMS}_rebuilt`;
const COLUMNS = "id, job_id, process_id, created_at, started_at";

/** SQLite only: one statement of the table rebuild. */
const sqlite = (statement: string): MigrationStep => ({ sql: { sqlite: statement } });

/**
 * SQLite cannot drop a constraint: the claims table is built again without it, under a
 * temporary name, its rows copied with their ids, its id sequence carried over (so a claim id is
 * never handed out twice), the old table dropped with its indexes, the new one renamed and the
 * same two indexes created on it. All inside `migrate`'s transaction, so a failure leaves the old
 * table as it was.
 */
const rebuildOnSqlite: MigrationStep[] = [
  sqlite(
    `CREATE TABLE ${REBUILT} (\n  "id" INTEGER PRIMARY KEY AUTOINCREMENT,\n  "job_id" INTEGER NOT NULL,\n` +
      `  "process_id" INTEGER,\n  "created_at" TEXT NOT NULL,\n  "started_at" TEXT\n)`,
  ),
  sqlite(`INSERT INTO ${REBUILT} (${COLUMNS}) SELECT ${COLUMNS} FROM ${CLAIMS}`),
  sqlite(`DELETE FROM sqlite_sequence WHERE name = '${REBUILT}'`),
  sqlite(
    `INSERT INTO sqlite_sequence (name, seq) SELECT '${REBUILT}', seq FROM sqlite_sequence WHERE name = '${CLAIMS}'`,
  ),
  sqlite(`DROP TABLE ${CLAIMS}`),
  sqlite(`ALTER TABLE ${REBUILT} RENAME TO ${CLAIMS}`),
  sqlite(`CREATE UNIQUE INDEX IF NOT EXISTS index_${CLAIMS}_on_job_id ON ${CLAIMS} ("job_id")`),
  sqlite(`CREATE INDEX IF NOT EXISTS index_${CLAIMS}_on_process_id_and_job_id ON ${CLAIMS} ("process_id", "job_id")`),
];

/**
 * Migration 016: `firm_queue_claimed_executions.job_id` no longer references the jobs table.
 *
 * The check cost the claim more than anything else in its schema: every claim inserted locked its
 * job's row (`FOR KEY SHARE` on PostgreSQL, a shared lock on MariaDB), so the claim commit wrote
 * a lock record into the job row, and finishing the same job right after met that lock
 * (docs/benchmarks.md, "What each design choice costs"). The integrity it gave is kept by the
 * code instead: no path deletes a job that has a claim, and crash recovery removes a claim whose
 * job row is gone (deleted by hand), so it is never an error (docs/internals.md, "Claims and their
 * jobs"). The other execution tables keep their foreign keys.
 *
 * PostgreSQL and MariaDB drop the constraint by the name each gave it when migration 001 created
 * the table (unnamed there): PostgreSQL `<table>_job_id_fkey`, MariaDB `<table>_ibfk_1` (the
 * table's only foreign key). `IF EXISTS`: a schema whose constraint has another name (created by
 * another tool) keeps it, which changes nothing but this migration's gain.
 */
export const claimsWithoutJobForeignKey: Migration = {
  version: "016_claims_without_job_foreign_key",
  steps: [
    ...rebuildOnSqlite,
    {
      sql: {
        postgres: `ALTER TABLE ${CLAIMS} DROP CONSTRAINT IF EXISTS ${CLAIMS}_job_id_fkey`,
        mysql: `ALTER TABLE ${CLAIMS} DROP FOREIGN KEY IF EXISTS ${CLAIMS}_ibfk_1`,
      },
    },
  ],
};
