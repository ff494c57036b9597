import type { Migration } from "./table-spec.js";

/**
 * PostgreSQL only: `firm_queue_jobs.awaited`, set by `firm.waitFor` on the jobs someone waits
 * for, and row triggers that send the job's id on channel `firm_queue_job_ended` when such a job
 * finishes, fails an attempt, is cancelled or is deleted. The triggers' `WHEN (OLD.awaited)` is
 * checked by the server without calling the function, so a job nobody waits for costs no
 * notification: the finish path of an unwatched queue stays as it was. SQLite and MariaDB have
 * no notifications: their waiters poll (one query per interval for every waiter of a process).
 */
export const notifyEndedJobs: Migration = {
  version: "011_notify_ended_jobs",
  steps: [
    {
      sql: {
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS awaited BOOLEAN NOT NULL DEFAULT FALSE",
      },
    },
    {
      sql: {
        postgres: `CREATE OR REPLACE FUNCTION firm_queue_notify_job_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('firm_queue_job_ended', OLD.id::text);
  RETURN NULL;
END
$$`,
      },
    },
    { sql: { postgres: "DROP TRIGGER IF EXISTS firm_queue_jobs_ended_notify ON firm_queue_jobs" } },
    {
      sql: {
        postgres:
          "CREATE TRIGGER firm_queue_jobs_ended_notify AFTER UPDATE OF finished_at, last_error ON firm_queue_jobs " +
          "FOR EACH ROW WHEN (OLD.awaited AND (NEW.finished_at IS NOT NULL OR NEW.last_error IS DISTINCT FROM OLD.last_error)) " +
          "EXECUTE FUNCTION firm_queue_notify_job_ended()",
      },
    },
    { sql: { postgres: "DROP TRIGGER IF EXISTS firm_queue_jobs_deleted_notify ON firm_queue_jobs" } },
    {
      sql: {
        postgres:
          "CREATE TRIGGER firm_queue_jobs_deleted_notify AFTER DELETE ON firm_queue_jobs " +
          "FOR EACH ROW WHEN (OLD.awaited) EXECUTE FUNCTION firm_queue_notify_job_ended()",
      },
    },
  ],
};
