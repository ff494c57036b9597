import type { Migration } from "./table-spec.js";

/**
 * `firm_queue_jobs.last_error`: the error of the job's most recent failed attempt (JSON, like
 * failed executions), kept when the job is retried, discarded or later succeeds, so `getJob`
 * can show why a job needed more than one attempt.
 */
export const addJobsLastError: Migration = {
  version: "002_add_jobs_last_error",
  steps: [
    {
      sql: {
        // SQLite runs the whole migration in one transaction, so the column cannot be half added.
        sqlite: "ALTER TABLE firm_queue_jobs ADD COLUMN last_error TEXT",
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS last_error TEXT",
        // MariaDB commits DDL at once; IF NOT EXISTS lets an interrupted migration run again.
        mysql: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS last_error LONGTEXT",
      },
    },
  ],
};
