export { FirmQueue } from "./firm-queue.js";
export { Job } from "./job.js";
export type { FirmQueueOptions, StartOptions, WorkerOptions, DispatcherOptions } from "./configuration.js";
export type { JobContext, JobHandler, JobOptions, EnqueueOptions, ResolvedJobOptions } from "./job-definition.js";
export type { ConcurrencyOptions, ConcurrencyKeyValue, OnConflict } from "./concurrency-options.js";
export type { JobInfo, JobState } from "./models/job-info.js";
export type { QueueInfo } from "./models/queue-stats.js";
export type { StoredError } from "./models/failed-execution.js";
export type { Supervisor, StopOptions } from "./supervisor/supervisor.js";
export type { LifecycleHooks, ProcessInfo, ErrorContext } from "./processes/hooks.js";
export type { DrainOptions } from "./drain.js";
export type { RecurringTaskOptions, RecurringTasksOptions } from "./recurring/config.js";
export type { RecurringTaskInfo, RecurringOperations } from "./recurring/operations.js";
export type { SchedulerOptions } from "./recurring/scheduler-options.js";
export type { Duration } from "./duration.js";
export type { Backoff, RetryOptions, RetryPolicy } from "./retry-policy.js";
export type { FailedJobInfo, FailedJobFilter } from "./models/failed-jobs.js";
export type { FailedJobOperations, ListFailedJobsOptions, BatchOptions } from "./failed-job-operations.js";
export type { QueueOperations } from "./queue-operations.js";
export type { ClearFinishedJobsOptions } from "./clear-finished-jobs.js";
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
  DatabaseTimeoutError,
} from "./errors.js";
export { defineConfig } from "./config/cli-config.js";
export type { FirmQueueConfig } from "./config/cli-config.js";
