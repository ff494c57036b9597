import type { Migration } from "./table-spec.js";

/**
 * Two columns 001 lacks on recurring tasks:
 * - `timezone`: the IANA zone the cron expression is read in, so the CLI and every scheduler
 *   compute the same ticks from the row alone. NULL means UTC.
 * - `last_run_at`: the latest tick any scheduler has fired. Schedulers advance it in the tick's
 *   transaction, so a tick is done once even after its job (and with it, by cascade, its
 *   recurring execution row) was deleted.
 * SQLite has no ADD COLUMN IF NOT EXISTS, but its migration runs in one transaction; MySQL commits
 * each DDL statement on its own, so there every statement must be safe to run again.
 */
export const recurringTaskTimezoneAndLastRun: Migration = {
  version: "003_recurring_task_timezone_and_last_run",
  steps: [
    {
      sql: {
        sqlite: 'ALTER TABLE firm_queue_recurring_tasks ADD COLUMN "timezone" TEXT',
        postgres: 'ALTER TABLE firm_queue_recurring_tasks ADD COLUMN IF NOT EXISTS "timezone" VARCHAR(255)',
        mysql: "ALTER TABLE firm_queue_recurring_tasks ADD COLUMN IF NOT EXISTS `timezone` VARCHAR(255)",
      },
    },
    {
      sql: {
        sqlite: 'ALTER TABLE firm_queue_recurring_tasks ADD COLUMN "last_run_at" TEXT',
        postgres:
          'ALTER TABLE firm_queue_recurring_tasks ADD COLUMN IF NOT EXISTS "last_run_at" TIMESTAMP(6) WITH TIME ZONE',
        mysql: "ALTER TABLE firm_queue_recurring_tasks ADD COLUMN IF NOT EXISTS `last_run_at` DATETIME(6)",
      },
    },
  ],
};
