import type { Migration, TableSpec } from "./table-spec.js";

/**
 * One row per batch (`firm.batch`): how many jobs it has (`total`) and how many of them have not
 * ended yet (`pending`), how the others ended (`finished`, `failed`, `cancelled`), and the
 * callbacks to enqueue when `pending` reaches 0 (JSON). Every end of a member job updates this one
 * row, in the transaction that ended the job; the row lock is what makes the callbacks run once.
 */
const batches: TableSpec = {
  name: "firm_queue_batches",
  columns: {
    id: { kind: "id" },
    /** `pending` while jobs remain; then `finished`, `failed` or `cancelled` (see docs/workflows.md). */
    state: { kind: "string", notNull: true, length: 16 },
    total: { kind: "integer", notNull: true },
    pending: { kind: "integer", notNull: true },
    finished: { kind: "integer", notNull: true },
    failed: { kind: "integer", notNull: true },
    cancelled: { kind: "integer", notNull: true },
    /** JSON: `{ onSuccess?, onFailure?, onFinish? }`, each the job to enqueue. */
    callbacks: { kind: "longText", notNull: true },
    created_at: { kind: "timestamp", notNull: true },
    updated_at: { kind: "timestamp", notNull: true },
    ended_at: { kind: "timestamp" },
  },
  indexes: [],
};

/**
 * One row per job of a batch: its `state` is null until the job ends, then how it ended. A job
 * counts in its batch once, when this row goes from null to a state; a job retried by hand after
 * failing for good does not count again. No foreign key on `job_id`: a finished job deleted
 * (cleanup, or finished jobs not kept) leaves its batch's counts as they are.
 */
const batchJobs: TableSpec = {
  name: "firm_queue_batch_jobs",
  columns: {
    id: { kind: "id" },
    batch_id: { kind: "reference", notNull: true },
    job_id: { kind: "reference", notNull: true },
    state: { kind: "string", length: 16 },
    created_at: { kind: "timestamp", notNull: true },
  },
  indexes: [
    { name: "index_firm_queue_batch_jobs_on_job_id", columns: ["job_id"], unique: true },
    { name: "index_firm_queue_batch_jobs_on_batch_id", columns: ["batch_id"] },
  ],
  foreignKeys: [{ column: "batch_id", references: "firm_queue_batches (id)", onDeleteCascade: true }],
};

/**
 * Migration 015: batches. `firm_queue_jobs.batch_id` says which batch a job belongs to (or which
 * batch's callback it is), so its handler's `context.batch` can add jobs to it; null for the rest.
 */
export const addBatches: Migration = {
  version: "015_add_batches",
  steps: [
    { createTable: batches },
    { createTable: batchJobs },
    {
      sql: {
        sqlite: "ALTER TABLE firm_queue_jobs ADD COLUMN batch_id INTEGER",
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS batch_id BIGINT",
        mysql: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS batch_id BIGINT",
      },
    },
  ],
};
