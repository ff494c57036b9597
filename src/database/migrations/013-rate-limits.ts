import type { Migration, TableSpec } from "./table-spec.js";

/**
 * One row per rate-limit budget (a job's group or key, or a queue): its limit, and the times the
 * budget claim reads. `available_at` is when a job waiting for the budget may start (null while
 * none waits): the claim looks only at budgets whose time has come, through its index, so it
 * never scans waiting jobs. `queue_name` is set for a queue's budget only.
 */
const rateBudgets: TableSpec = {
  name: "firm_queue_rate_budgets",
  columns: {
    id: { kind: "id" },
    key: { kind: "string", notNull: true },
    limit_count: { kind: "integer", notNull: true },
    period_ms: { kind: "integer", notNull: true },
    queue_name: { kind: "string" },
    available_at: { kind: "timestamp" },
    closed_until: { kind: "timestamp" },
    created_at: { kind: "timestamp", notNull: true },
    updated_at: { kind: "timestamp", notNull: true },
  },
  indexes: [
    { name: "index_firm_queue_rate_budgets_on_key", columns: ["key"], unique: true },
    { name: "index_firm_queue_rate_budgets_on_available_at", columns: ["available_at"] },
    { name: "index_firm_queue_rate_budgets_on_queue_name", columns: ["queue_name"] },
  ],
};

/**
 * The start log of the sliding windows: one row per budget claim, with how many jobs it started.
 * A budget's use is the sum of its rows newer than one period; older rows are pruned by the claim.
 * No foreign key: the starts of a job that is gone still count.
 */
const rateStarts: TableSpec = {
  name: "firm_queue_rate_starts",
  columns: {
    id: { kind: "id" },
    budget_key: { kind: "string", notNull: true },
    started_at: { kind: "timestamp", notNull: true },
    count: { kind: "integer", notNull: true },
  },
  indexes: [
    { name: "index_firm_queue_rate_starts_on_budget_key_and_started_at", columns: ["budget_key", "started_at"] },
  ],
};

/** Due jobs with their own rate limit, waiting for their budget: never in the ready table. */
const throttledExecutions: TableSpec = {
  name: "firm_queue_throttled_executions",
  columns: {
    id: { kind: "id" },
    job_id: { kind: "reference", notNull: true },
    queue_name: { kind: "string", notNull: true },
    priority: { kind: "integer", notNull: true, default: "0" },
    budget_key: { kind: "string", notNull: true },
    created_at: { kind: "timestamp", notNull: true },
  },
  indexes: [
    { name: "index_firm_queue_throttled_executions_on_job_id", columns: ["job_id"], unique: true },
    { name: "index_firm_queue_throttled_executions_for_claim", columns: ["budget_key", "priority", "job_id"] },
  ],
  foreignKeys: [{ column: "job_id", references: "firm_queue_jobs (id)", onDeleteCascade: true }],
};

/**
 * Migration 013: rate limits (docs/rate-limits.md). `firm_queue_jobs.rate_limit_key` is the
 * budget a job's own limit charges, computed at enqueue like the concurrency key.
 */
export const rateLimits: Migration = {
  version: "013_rate_limits",
  steps: [
    {
      sql: {
        sqlite: "ALTER TABLE firm_queue_jobs ADD COLUMN rate_limit_key TEXT",
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS rate_limit_key VARCHAR(255)",
        mysql: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS rate_limit_key VARCHAR(255)",
      },
    },
    { createTable: rateBudgets },
    { createTable: rateStarts },
    { createTable: throttledExecutions },
  ],
};
