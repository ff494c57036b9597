export { FirmQueue } from "./firm-queue.js";
export type { Job } from "./facade/job.js";
export type { FirmQueueOptions, StartOptions, WorkerOptions, DispatcherOptions } from "./facade/options.js";
export type {
  JobContext,
  JobHandler,
  JobOptions,
  EnqueueOptions,
  ResolvedJobOptions,
} from "./definitions/job-definition.js";
export type { ConcurrencyOptions, ConcurrencyKeyValue, OnConflict } from "./definitions/concurrency-options.js";
export type { JobInfo, JobState } from "./models/job-info.js";
export type { QueueInfo } from "./models/queue-stats.js";
export type { StoredError } from "./models/failed-execution.js";
export type { Supervisor, StopOptions } from "./supervisor/supervisor.js";
export type { LifecycleHooks, ProcessInfo, ErrorContext } from "./processes/hooks.js";
export type { DrainOptions } from "./facade/drain.js";
export type { RecurringTaskOptions, RecurringTasksOptions } from "./definitions/recurring-task.js";
export type { RecurringTaskInfo, RecurringOperations } from "./facade/recurring-operations.js";
export type { SchedulerOptions } from "./facade/scheduler-options.js";
export type { Duration } from "./duration.js";
export type { Backoff, RetryOptions, RetryPolicy } from "./definitions/retry-policy.js";
export type { FailedJobInfo, FailedJobFilter } from "./lifecycle/failed-jobs.js";
export type { FailedJobOperations, ListFailedJobsOptions, BatchOptions } from "./facade/failed-job-operations.js";
export type { QueueOperations } from "./facade/queue-operations.js";
export type { ClearFinishedJobsOptions } from "./facade/clear-finished-jobs.js";
export type { Logger, LogLevel } from "./logger.js";
export { consoleLogger, silentLogger } from "./logger.js";
export {
  FirmQueueError,
  ConfigurationError,
  DatabaseUrlError,
  SerializationError,
  DeserializationError,
  UnknownJobError,
  DuplicateJobError,
  JobNotFoundError,
  ClosedError,
  UnrecoverableError,
  TimeoutError,
  JobNotFailedError,
  JobRunningError,
  ProcessExitError,
  ProcessPrunedError,
  ProcessMissingError,
  ChildProcessError,
  RecurringTaskError,
} from "./errors.js";
export { defineConfig } from "./cli/config.js";
export type { FirmQueueConfig } from "./cli/config.js";
export {
  fromPg,
  fromMysql2,
  fromBetterSqlite3,
  fromKnex,
  fromDrizzle,
  fromKysely,
} from "./database/app-transaction.js";
export type { AppTransaction, EnqueueTransaction } from "./database/app-transaction.js";
export type {
  DatabaseHandle,
  PgPoolHandle,
  MysqlPoolHandle,
  BetterSqlite3Handle,
  KyselyHandle,
} from "./database/handle.js";
export { UnsupportedHandleError } from "./database/handle.js";
export { MissingDatabaseError } from "./database-url-option.js";
export { MissingDriverError } from "./database/driver-import.js";
