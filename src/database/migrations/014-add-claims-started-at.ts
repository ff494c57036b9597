import type { Migration } from "./table-spec.js";

/**
 * `firm_queue_claimed_executions.started_at`: when the claiming worker handed the job to its
 * handler, NULL while the claim waits in the worker's buffer. Crash recovery counts a failed
 * attempt only for a started claim; one that never started goes back in line as it was.
 */
export const addClaimsStartedAt: Migration = {
  version: "014_add_claims_started_at",
  steps: [
    {
      sql: {
        sqlite: "ALTER TABLE firm_queue_claimed_executions ADD COLUMN started_at TEXT",
        postgres:
          "ALTER TABLE firm_queue_claimed_executions ADD COLUMN IF NOT EXISTS started_at TIMESTAMP(6) WITH TIME ZONE",
        mysql: "ALTER TABLE firm_queue_claimed_executions ADD COLUMN IF NOT EXISTS started_at DATETIME(6)",
      },
    },
  ],
};
