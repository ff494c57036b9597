import type { Migration, TableSpec } from "./table-spec.js";

/**
 * The table that makes unique jobs race-safe: one row per job key held, unique on
 * `(job_name, key)`, so two enqueues of the same key at once cannot both take it whatever the
 * database (the second INSERT meets the first's row). A row lives while its key is held: from
 * enqueue until the job ends (finished, failed, discarded, cancelled, cleared), or until
 * `held_until` for keys held for a period after their job finished. There is no foreign key to
 * the job on purpose: a key held after its job finished outlives the job row when finished jobs
 * are not kept.
 */
const jobKeys: TableSpec = {
  name: "firm_queue_job_keys",
  columns: {
    id: { kind: "id" },
    job_name: { kind: "string", notNull: true },
    key: { kind: "string", notNull: true },
    job_id: { kind: "reference", notNull: true },
    /** `waiting`, `running`, `finished` or `replace`: which states of the holder keep the key. */
    mode: { kind: "string", notNull: true, length: 16 },
    /** For mode `finished`: milliseconds the key stays held after the job finished. */
    hold_for: { kind: "reference" },
    /** Set when the holder finished in mode `finished`: the key is free from then on. */
    held_until: { kind: "timestamp" },
    created_at: { kind: "timestamp", notNull: true },
  },
  indexes: [
    { name: "index_firm_queue_job_keys_on_job_name_and_key", columns: ["job_name", "key"], unique: true },
    { name: "index_firm_queue_job_keys_on_job_id", columns: ["job_id"] },
  ],
};

/**
 * Migration 007: unique jobs. `firm_queue_jobs.job_key` records the key a job was enqueued with
 * (for inspection and cancel-by-key); `firm_queue_job_keys` holds the keys in use.
 */
export const addJobKeys: Migration = {
  version: "007_add_job_keys",
  steps: [
    {
      sql: {
        sqlite: "ALTER TABLE firm_queue_jobs ADD COLUMN job_key TEXT",
        postgres: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS job_key VARCHAR(255)",
        mysql: "ALTER TABLE firm_queue_jobs ADD COLUMN IF NOT EXISTS job_key VARCHAR(255)",
      },
    },
    {
      sql: {
        sqlite: "CREATE INDEX IF NOT EXISTS index_firm_queue_jobs_on_job_key ON firm_queue_jobs (job_key)",
        postgres: "CREATE INDEX IF NOT EXISTS index_firm_queue_jobs_on_job_key ON firm_queue_jobs (job_key)",
        mysql: "CREATE INDEX IF NOT EXISTS index_firm_queue_jobs_on_job_key ON firm_queue_jobs (job_key)",
      },
    },
    { createTable: jobKeys },
  ],
};
