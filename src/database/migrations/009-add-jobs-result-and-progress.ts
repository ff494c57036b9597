import type { Migration } from "./table-spec.js";

/**
 * `firm_queue_jobs.result`: the JSON of what the handler returned, written with the successful
 * attempt (size-limited; see `MAX_RESULT_BYTES`). `progress`: the latest value the handler
 * reported through `context.progress()`, written at most a few times a second.
 */
export const addJobsResultAndProgress: Migration = {
  version: "009_add_jobs_result_and_progress",
  steps: [
    {
      sql: {
        sqlite: "ALTER TABLE firm_queue_jobs ADD COLUMN result TEXT",
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS result TEXT",
        mysql: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS result LONGTEXT",
      },
    },
    {
      sql: {
        sqlite: "ALTER TABLE firm_queue_jobs ADD COLUMN progress TEXT",
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS progress TEXT",
        mysql: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS progress TEXT",
      },
    },
  ],
};
