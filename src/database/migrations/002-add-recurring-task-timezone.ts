import type { Migration } from "./table-spec.js";

/**
 * Recurring tasks carry the IANA time zone their cron expression is read in. 001 has no column
 * for it; the CLI and every scheduler must compute the same ticks from the row alone. NULL means
 * UTC, so rows written before this migration keep their meaning.
 */
export const addRecurringTaskTimezone: Migration = {
  version: "002_add_recurring_task_timezone",
  steps: [
    {
      sql: {
        // SQLite has no ADD COLUMN IF NOT EXISTS; its migration runs in one transaction instead.
        sqlite: 'ALTER TABLE firm_queue_recurring_tasks ADD COLUMN "timezone" TEXT',
        postgres: 'ALTER TABLE firm_queue_recurring_tasks ADD COLUMN IF NOT EXISTS "timezone" VARCHAR(255)',
        // MySQL DDL commits on its own, so the statement must be safe to run again.
        mysql: "ALTER TABLE firm_queue_recurring_tasks ADD COLUMN IF NOT EXISTS `timezone` VARCHAR(255)",
      },
    },
  ],
};
