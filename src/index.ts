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
} from "./errors.js";
export { defineConfig } from "./config/cli-config.js";
export type { FirmQueueConfig } from "./config/cli-config.js";
export type { JobInspection, ListJobsOptions, ThroughputOptions, RecurringTaskDetail } from "./job-inspection.js";
export type { JobSummary, JobPage } from "./models/job-listing.js";
export type { JobDetail, TimelineEvent } from "./models/job-timeline.js";
export type { QueueCounts } from "./models/queue-counts.js";
export type { ProcessDetail } from "./models/process-listing.js";
export type { ProcessRow, ProcessKind } from "./models/process.js";
export type { RecurringRun } from "./models/recurring-runs.js";
export type { SemaphoreUsage } from "./models/semaphore-usage.js";
export type { ThroughputBucket } from "./models/throughput.js";
export { InvalidCursorError } from "./models/job-cursor.js";
export { RecurringTaskNotFoundError } from "./errors.js";
export { createDashboard } from "./dashboard/adapters.js";
export type { Dashboard, NodeDashboardHandler, FetchDashboardHandler } from "./dashboard/adapters.js";
export { startDashboardServer } from "./dashboard/server.js";
export type { DashboardServer, DashboardServerOptions } from "./dashboard/server.js";
export { dashboardAuthFromEnv } from "./dashboard/options.js";
export type { DashboardOptions, DashboardAuthRequest } from "./dashboard/options.js";
export type { CountJobsOptions } from "./job-inspection.js";
export type { BoundedCount } from "./models/job-count.js";
