import type { Migration } from "./table-spec.js";

/**
 * `firm_queue_jobs.semaphore_id`: the semaphore row a job took its concurrency slot from. When
 * a semaphore expires and a new row is created for its key, a job that took its slot from the
 * old row gives nothing back to the new one, so the key's limit holds once it ends. Null for a
 * job without a slot (or one admitted before this migration: it releases by key, as before).
 */
export const addJobsSemaphoreId: Migration = {
  version: "005_add_jobs_semaphore_id",
  steps: [
    {
      sql: {
        sqlite: "ALTER TABLE firm_queue_jobs ADD COLUMN semaphore_id INTEGER",
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS semaphore_id BIGINT",
        mysql: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS semaphore_id BIGINT",
      },
    },
  ],
};
