import type { ColumnSpec, ForeignKeySpec, Migration, TableSpec } from "./table-spec.js";

/** The eleven tables, following Solid Queue's schema with a `firm_queue_` prefix, plus `jobs.attempts`. */
const id: ColumnSpec = { kind: "id" };
const jobId: ColumnSpec = { kind: "reference", notNull: true };
const queueName: ColumnSpec = { kind: "string", notNull: true };
const priority: ColumnSpec = { kind: "integer", notNull: true, default: "0" };
const createdAt: ColumnSpec = { kind: "timestamp", notNull: true };
const cascadeToJob: ForeignKeySpec = { column: "job_id", references: "firm_queue_jobs (id)", onDeleteCascade: true };

const jobs: TableSpec = {
  name: "firm_queue_jobs",
  columns: {
    id,
    queue_name: queueName,
    class_name: { kind: "string", notNull: true },
    arguments: { kind: "longText" },
    priority,
    attempts: { kind: "integer", notNull: true, default: "0" },
    active_job_id: { kind: "string" },
    scheduled_at: { kind: "timestamp" },
    finished_at: { kind: "timestamp" },
    concurrency_key: { kind: "string" },
    created_at: createdAt,
    updated_at: { kind: "timestamp", notNull: true },
  },
  indexes: [
    { name: "index_firm_queue_jobs_on_active_job_id", columns: ["active_job_id"] },
    { name: "index_firm_queue_jobs_on_class_name", columns: ["class_name"] },
    { name: "index_firm_queue_jobs_on_finished_at", columns: ["finished_at"] },
    { name: "index_firm_queue_jobs_for_filtering", columns: ["queue_name", "finished_at"] },
    { name: "index_firm_queue_jobs_for_alerting", columns: ["scheduled_at", "finished_at"] },
  ],
};

const readyExecutions: TableSpec = {
  name: "firm_queue_ready_executions",
  columns: { id, job_id: jobId, queue_name: queueName, priority, created_at: createdAt },
  indexes: [
    { name: "index_firm_queue_ready_executions_on_job_id", columns: ["job_id"], unique: true },
    { name: "index_firm_queue_poll_all", columns: ["priority", "job_id"] },
    { name: "index_firm_queue_poll_by_queue", columns: ["queue_name", "priority", "job_id"] },
  ],
  foreignKeys: [cascadeToJob],
};

const claimedExecutions: TableSpec = {
  name: "firm_queue_claimed_executions",
  columns: { id, job_id: jobId, process_id: { kind: "reference" }, created_at: createdAt },
  indexes: [
    { name: "index_firm_queue_claimed_executions_on_job_id", columns: ["job_id"], unique: true },
    { name: "index_firm_queue_claimed_executions_on_process_id_and_job_id", columns: ["process_id", "job_id"] },
  ],
  foreignKeys: [cascadeToJob],
};

const scheduledExecutions: TableSpec = {
  name: "firm_queue_scheduled_executions",
  columns: {
    id,
    job_id: jobId,
    queue_name: queueName,
    priority,
    scheduled_at: { kind: "timestamp", notNull: true },
    created_at: createdAt,
  },
  indexes: [
    { name: "index_firm_queue_scheduled_executions_on_job_id", columns: ["job_id"], unique: true },
    { name: "index_firm_queue_dispatch_all", columns: ["scheduled_at", "priority", "job_id"] },
  ],
  foreignKeys: [cascadeToJob],
};

const blockedExecutions: TableSpec = {
  name: "firm_queue_blocked_executions",
  columns: {
    id,
    job_id: jobId,
    queue_name: queueName,
    priority,
    concurrency_key: { kind: "string", notNull: true },
    expires_at: { kind: "timestamp", notNull: true },
    created_at: createdAt,
  },
  indexes: [
    { name: "index_firm_queue_blocked_executions_for_release", columns: ["concurrency_key", "priority", "job_id"] },
    { name: "index_firm_queue_blocked_executions_for_maintenance", columns: ["expires_at", "concurrency_key"] },
    { name: "index_firm_queue_blocked_executions_on_job_id", columns: ["job_id"], unique: true },
  ],
  foreignKeys: [cascadeToJob],
};

const failedExecutions: TableSpec = {
  name: "firm_queue_failed_executions",
  columns: { id, job_id: jobId, error: { kind: "longText" }, created_at: createdAt },
  indexes: [{ name: "index_firm_queue_failed_executions_on_job_id", columns: ["job_id"], unique: true }],
  foreignKeys: [cascadeToJob],
};

const pauses: TableSpec = {
  name: "firm_queue_pauses",
  columns: { id, queue_name: queueName, created_at: createdAt },
  indexes: [{ name: "index_firm_queue_pauses_on_queue_name", columns: ["queue_name"], unique: true }],
};

const processes: TableSpec = {
  name: "firm_queue_processes",
  columns: {
    id,
    kind: { kind: "string", notNull: true },
    last_heartbeat_at: { kind: "timestamp", notNull: true },
    supervisor_id: { kind: "reference" },
    pid: { kind: "integer", notNull: true },
    hostname: { kind: "string" },
    metadata: { kind: "text" },
    name: { kind: "string", notNull: true },
    created_at: createdAt,
  },
  indexes: [
    { name: "index_firm_queue_processes_on_last_heartbeat_at", columns: ["last_heartbeat_at"] },
    { name: "index_firm_queue_processes_on_name_and_supervisor_id", columns: ["name", "supervisor_id"], unique: true },
    { name: "index_firm_queue_processes_on_supervisor_id", columns: ["supervisor_id"] },
  ],
};

const recurringTasks: TableSpec = {
  name: "firm_queue_recurring_tasks",
  columns: {
    id,
    key: { kind: "string", notNull: true },
    schedule: { kind: "string", notNull: true },
    command: { kind: "string", length: 2048 },
    class_name: { kind: "string" },
    arguments: { kind: "longText" },
    queue_name: { kind: "string" },
    priority: { kind: "integer", default: "0" },
    static: { kind: "boolean", notNull: true, default: "TRUE" },
    description: { kind: "text" },
    created_at: createdAt,
    updated_at: { kind: "timestamp", notNull: true },
  },
  indexes: [
    { name: "index_firm_queue_recurring_tasks_on_key", columns: ["key"], unique: true },
    { name: "index_firm_queue_recurring_tasks_on_static", columns: ["static"] },
  ],
};

const recurringExecutions: TableSpec = {
  name: "firm_queue_recurring_executions",
  columns: {
    id,
    job_id: jobId,
    task_key: { kind: "string", notNull: true },
    run_at: { kind: "timestamp", notNull: true },
    created_at: createdAt,
  },
  indexes: [
    { name: "index_firm_queue_recurring_executions_on_job_id", columns: ["job_id"], unique: true },
    {
      name: "index_firm_queue_recurring_executions_on_task_key_and_run_at",
      columns: ["task_key", "run_at"],
      unique: true,
    },
  ],
  foreignKeys: [cascadeToJob],
};

const semaphores: TableSpec = {
  name: "firm_queue_semaphores",
  columns: {
    id,
    key: { kind: "string", notNull: true },
    value: { kind: "integer", notNull: true, default: "1" },
    expires_at: { kind: "timestamp", notNull: true },
    created_at: createdAt,
    updated_at: { kind: "timestamp", notNull: true },
  },
  indexes: [
    { name: "index_firm_queue_semaphores_on_expires_at", columns: ["expires_at"] },
    { name: "index_firm_queue_semaphores_on_key_and_value", columns: ["key", "value"] },
    { name: "index_firm_queue_semaphores_on_key", columns: ["key"], unique: true },
  ],
};

/** Migration 001: the eleven tables of Solid Queue's design, with their indexes and foreign keys. */
export const createTables: Migration = {
  version: "001_create_tables",
  steps: [
    jobs,
    readyExecutions,
    claimedExecutions,
    scheduledExecutions,
    blockedExecutions,
    failedExecutions,
    pauses,
    processes,
    recurringTasks,
    recurringExecutions,
    semaphores,
  ].map((table) => ({ createTable: table })),
};
