import type { Migration } from "./table-spec.js";

/**
 * PostgreSQL only: every statement that makes jobs ready sends a notification on channel
 * `firm_queue_ready` when its transaction commits, so workers in any process wake at once instead
 * of at their next poll. One notification per statement (and PostgreSQL folds duplicates within a
 * transaction), so a bulk enqueue costs one. SQLite and MariaDB have no such thing: their workers
 * poll.
 */
export const notifyReadyJobs: Migration = {
  version: "004_notify_ready_jobs",
  steps: [
    {
      sql: {
        postgres: `CREATE OR REPLACE FUNCTION firm_queue_notify_ready() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('firm_queue_ready', '');
  RETURN NULL;
END
$$`,
      },
    },
    { sql: { postgres: "DROP TRIGGER IF EXISTS firm_queue_ready_executions_notify ON firm_queue_ready_executions" } },
    {
      sql: {
        postgres:
          "CREATE TRIGGER firm_queue_ready_executions_notify AFTER INSERT ON firm_queue_ready_executions " +
          "FOR EACH STATEMENT EXECUTE FUNCTION firm_queue_notify_ready()",
      },
    },
  ],
};
