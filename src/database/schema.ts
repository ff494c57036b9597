import type { ColumnType, Generated } from "kysely";

/**
 * Kysely's view of firm-queue's tables. Timestamps are written as `Date`; they read back as `Date`
 * on PostgreSQL and MySQL and as ISO-8601 text on SQLite, so models convert with `toDate`.
 */
type Timestamp = ColumnType<Date | string, Date, Date>;
type NullableTimestamp = ColumnType<Date | string | null, Date | null | undefined, Date | null>;
type Id = Generated<number>;
type CreatedAt = ColumnType<Date | string, Date, never>;

/** firm_queue_jobs: one row per job, whatever its state. */
export interface JobsTable {
  id: Id;
  queue_name: string;
  class_name: string;
  arguments: string | null;
  priority: ColumnType<number, number | undefined, number>;
  attempts: ColumnType<number, number | undefined, number>;
  active_job_id: string | null;
  scheduled_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  concurrency_key: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** JSON of the most recent failed attempt's error (migration 002). */
  last_error: string | null;
  /** The semaphore row the job's concurrency slot came from (migration 005); null when none. */
  semaphore_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The unique key the job was enqueued with (migration 007); null when none. */
  job_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the job was cancelled, or its cancel requested while it ran (migration 008). */
  cancelled_at: ColumnType<Date | string | null, Date | null | undefined, Date | null>;
  /** JSON of the handler's return value, written when the job finished (migration 009). */
  result: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON of the latest value the handler reported with `context.progress()` (migration 009). */
  progress: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON of the OpenTelemetry context that enqueued the job (migration 006); null when none. */
  trace_context: ColumnType<string | null, string | null | undefined, string | null>;
  /** Dependencies that have not ended yet (migration 012): above 0, the job is pending. */
  unmet_dependencies: ColumnType<number, number | undefined, number>;
  /**
   * 1 once a job has dependents (migration 012): its end releases or cancels them. Set too on every
   * job of a batch (migration 015), so that its end takes the path that counts it in its batch.
   */
  has_dependents: ColumnType<number, number | undefined, number>;
  /** The rate-limit budget of the job's own limit (migration 013); null when none. */
  rate_limit_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** The batch the job belongs to, or whose callback it is (migration 015); null when none. */
  batch_id: ColumnType<number | null, number | null | undefined, number | null>;
}

/** firm_queue_ready_executions: jobs waiting to be claimed, with what polling orders by. */
export interface ReadyExecutionsTable {
  id: Id;
  job_id: number;
  queue_name: string;
  priority: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
}

/** firm_queue_claimed_executions: jobs a process has claimed and runs. */
export interface ClaimedExecutionsTable {
  id: Id;
  job_id: number;
  process_id: number | null;
  created_at: CreatedAt;
  /** When the job was handed to its handler; NULL while it waits in the worker's buffer. */
  started_at: ColumnType<Date | string | null, Date | null | undefined, Date | null>;
}

/** firm_queue_scheduled_executions: jobs due later. */
export interface ScheduledExecutionsTable {
  id: Id;
  job_id: number;
  queue_name: string;
  priority: ColumnType<number, number | undefined, number>;
  scheduled_at: Timestamp;
  created_at: CreatedAt;
}

/** firm_queue_blocked_executions: jobs waiting for a slot of their concurrency key. */
export interface BlockedExecutionsTable {
  id: Id;
  job_id: number;
  queue_name: string;
  priority: ColumnType<number, number | undefined, number>;
  concurrency_key: string;
  expires_at: Timestamp;
  created_at: CreatedAt;
}

/** firm_queue_failed_executions: jobs that ran out of attempts, with their error. */
export interface FailedExecutionsTable {
  id: Id;
  job_id: number;
  error: string | null;
  created_at: CreatedAt;
}

/** firm_queue_pauses: paused queue names. */
export interface PausesTable {
  id: Id;
  queue_name: string;
  created_at: CreatedAt;
}

/** firm_queue_processes: registered supervisors and roles, with their heartbeats. */
export interface ProcessesTable {
  id: Id;
  kind: string;
  last_heartbeat_at: Timestamp;
  supervisor_id: number | null;
  pid: number;
  hostname: string | null;
  metadata: string | null;
  name: string;
  created_at: CreatedAt;
}

/** firm_queue_recurring_tasks: static and dynamic cron tasks. */
export interface RecurringTasksTable {
  id: Id;
  key: string;
  schedule: string;
  command: string | null;
  class_name: string | null;
  arguments: string | null;
  queue_name: string | null;
  priority: ColumnType<number | null, number | null | undefined, number | null>;
  /** Stored as 0/1 on SQLite and MySQL, a boolean on PostgreSQL. */
  static: ColumnType<boolean | number, boolean, boolean>;
  description: string | null;
  /** IANA time zone the schedule is read in (migration 002); null means UTC. */
  timezone: ColumnType<string | null, string | null | undefined, string | null>;
  /** The latest tick fired by any scheduler (migration 002); null before the first. */
  last_run_at: ColumnType<Date | string | null, Date | null | undefined, Date | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** firm_queue_recurring_executions: which job each tick of a task enqueued (unique per tick). */
export interface RecurringExecutionsTable {
  id: Id;
  job_id: number;
  task_key: string;
  run_at: Timestamp;
  created_at: CreatedAt;
}

/** firm_queue_semaphores: free slots per concurrency key, and when the row expires. */
export interface SemaphoresTable {
  id: Id;
  key: string;
  value: ColumnType<number, number | undefined, number>;
  expires_at: Timestamp;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** firm_queue_rate_budgets: one row per rate-limit budget (migration 013). */
export interface RateBudgetsTable {
  id: Id;
  key: string;
  limit_count: number;
  period_ms: number;
  /** Set for a queue's budget. */
  queue_name: ColumnType<string | null, string | null | undefined, string | null>;
  /** When a job waiting for the budget may start; null while none waits. */
  available_at: ColumnType<Date | string | null, Date | null | undefined, Date | null>;
  /** Closed by a RateLimitedError until then. */
  closed_until: ColumnType<Date | string | null, Date | null | undefined, Date | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** firm_queue_rate_starts: the start log of rate-limit windows, one row per budget claim (migration 013). */
export interface RateStartsTable {
  id: Id;
  budget_key: string;
  started_at: Timestamp;
  count: number;
}

/** firm_queue_throttled_executions: due jobs waiting for their rate-limit budget (migration 013). */
export interface ThrottledExecutionsTable {
  id: Id;
  job_id: number;
  queue_name: string;
  priority: ColumnType<number, number | undefined, number>;
  budget_key: string;
  created_at: CreatedAt;
}

/** firm_queue_job_keys: unique job keys held now (migration 007). */
export interface JobKeysTable {
  id: Id;
  job_name: string;
  key: string;
  job_id: number;
  mode: string;
  hold_for: number | string | null;
  held_until: NullableTimestamp;
  created_at: CreatedAt;
}

/** firm_queue_schema_migrations: the migrations applied. */
export interface SchemaMigrationsTable {
  version: string;
  applied_at: ColumnType<Date | string, Date, never>;
}

/** firm_queue_job_dependencies: one row per dependency of a job (migration 012). */
export interface JobDependenciesTable {
  id: Id;
  job_id: number;
  dependency_id: number;
  position: number;
  on_failure: string;
  dependency_name: string;
  dependency_state: string | null;
  result: string | null;
  created_at: CreatedAt;
}

/** firm_queue_batches: one row per batch, with its counts and callbacks (migration 015). */
export interface BatchesTable {
  id: Id;
  state: string;
  total: number;
  pending: number;
  finished: number;
  failed: number;
  cancelled: number;
  callbacks: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
  ended_at: NullableTimestamp;
}

/** firm_queue_batch_jobs: one row per job of a batch, with how it ended (migration 015). */
export interface BatchJobsTable {
  id: Id;
  batch_id: number;
  job_id: number;
  state: string | null;
  created_at: CreatedAt;
}

/** Every table firm-queue owns, by name. */
export interface Schema {
  firm_queue_jobs: JobsTable;
  firm_queue_ready_executions: ReadyExecutionsTable;
  firm_queue_claimed_executions: ClaimedExecutionsTable;
  firm_queue_scheduled_executions: ScheduledExecutionsTable;
  firm_queue_blocked_executions: BlockedExecutionsTable;
  firm_queue_failed_executions: FailedExecutionsTable;
  firm_queue_pauses: PausesTable;
  firm_queue_processes: ProcessesTable;
  firm_queue_recurring_tasks: RecurringTasksTable;
  firm_queue_recurring_executions: RecurringExecutionsTable;
  firm_queue_semaphores: SemaphoresTable;
  firm_queue_schema_migrations: SchemaMigrationsTable;
  firm_queue_job_keys: JobKeysTable;
  firm_queue_job_dependencies: JobDependenciesTable;
  firm_queue_rate_budgets: RateBudgetsTable;
  firm_queue_rate_starts: RateStartsTable;
  firm_queue_throttled_executions: ThrottledExecutionsTable;
  firm_queue_batches: BatchesTable;
  firm_queue_batch_jobs: BatchJobsTable;
}

/** Read a timestamp column whatever the driver returned. */
export function toDate(value: Date | string): Date;
/** A timestamp as a Date, whether the driver returned a Date or text (SQLite). */
export function toDate(value: Date | string | null): Date | null;
export function toDate(value: Date | string | null): Date | null {
  if (value === null) return null;
  return value instanceof Date ? value : new Date(value);
}
