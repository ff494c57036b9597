import type { Migration } from "./table-spec.js";

/**
 * `firm_queue_jobs.cancelled_at`: when the job was cancelled. A waiting job is cancelled at once
 * (it also gets `finished_at`, and stays for history like a finished job); for a running job it
 * is the request its worker hears of, and the job gets `finished_at` when the worker records it.
 */
export const addJobsCancelledAt: Migration = {
  version: "008_add_jobs_cancelled_at",
  steps: [
    {
      sql: {
        sqlite: "ALTER TABLE firm_queue_jobs ADD COLUMN cancelled_at TEXT",
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS cancelled_at TIMESTAMP(6) WITH TIME ZONE",
        mysql: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS cancelled_at DATETIME(6)",
      },
    },
  ],
};
