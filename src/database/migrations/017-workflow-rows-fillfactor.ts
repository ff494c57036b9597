import type { Migration } from "./table-spec.js";

const EDGES = "firm_queue_job_dependencies";
const MEMBERS = "firm_queue_batch_jobs";

/**
 * Migration 017, PostgreSQL only: the dependency edges and batch memberships are written with
 * half of each page left free (`fillfactor = 50`).
 *
 * Each of these rows is updated once, when its job ends (its state set). Written by one bulk
 * insert, their pages were full, so that update could not put the new row version on the same
 * page: it was a non-HOT update, which adds an entry to every index of the table (three records
 * of WAL more per row, on the finish path of every job of a flow or a batch). With room on the
 * page, the update is HOT: no index entry, the row's old version pruned in place. Each row is
 * updated once, so half a page is room for all of them. The setting applies to pages written from
 * now on; rows already there keep their pages. SQLite and MariaDB (InnoDB) update in place and
 * have no such setting.
 */
export const workflowRowsFillfactor: Migration = {
  version: "017_workflow_rows_fillfactor",
  steps: [
    { sql: { postgres: `ALTER TABLE ${EDGES} SET (fillfactor = 50)` } },
    { sql: { postgres: `ALTER TABLE ${MEMBERS} SET (fillfactor = 50)` } },
  ],
};
