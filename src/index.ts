export { FirmQueue } from "./firm-queue.js";
export type { EnqueueByNameOptions, SchemaJobOptions } from "./firm-queue.js";
export type {
  StandardSchema,
  StandardSchemaProps,
  StandardSchemaResult,
  StandardSchemaIssue,
  SchemaInput,
  SchemaOutput,
} from "./standard-schema.js";
export type { Job, EnqueueAndWaitOptions } from "./facade/job.js";
export type { FlowJob, FlowNode, FlowOptions } from "./facade/flow.js";
export type { BatchCallback, BatchEnqueueOptions, BatchInfo, BatchJob, BatchResult } from "./facade/batch.js";
export type { EndedJob, WaitForOptions } from "./facade/wait-for.js";
export type { FirmQueueOptions, StartOptions, WorkerOptions, DispatcherOptions } from "./facade/options.js";
export type {
  BatchJobAdded,
  DependencyResult,
  JobBatch,
  JobContext,
  JobHandler,
  JobOptions,
  EnqueueOptions,
  EnqueueAllOptions,
  JobEnqueueOptions,
  JobArguments,
  ResolvedJobOptions,
} from "./definitions/job-definition.js";
export type { ConcurrencyOptions, ConcurrencyKeyValue, OnConflict } from "./definitions/concurrency-options.js";
export type { UniqueMode, UniqueOptions } from "./definitions/unique-options.js";
export type { DroppedJob, EnqueuedJob, EnqueueResult } from "./lifecycle/enqueue-result.js";
export type { CancelOutcome } from "./lifecycle/job-cancel.js";
export { CancelledSignal } from "./roles/cancel-watch.js";
export { ShutdownSignal } from "./roles/job-runner.js";
export { SchemaOutOfDateError } from "./database/schema-out-of-date-error.js";
export { TablePrefixError } from "./database/table-prefix.js";
export type { CancelAllOptions, JobOperations } from "./facade/job-operations.js";
export type {
  JobInfo,
  JobInfoOf,
  JobInfoCommon,
  JobBudgetWait,
  JobState,
  PendingJobInfo,
  ReadyJobInfo,
  ThrottledJobInfo,
  ScheduledJobInfo,
  BlockedJobInfo,
  ClaimedJobInfo,
  FailedStateJobInfo,
  FinishedJobInfo,
  CancelledJobInfo,
  OtherStatesFields,
} from "./models/job-info.js";
export type { EnqueueArgumentsOf, JobName, NamesJobs, Storable } from "./definitions/job-names.js";
export type { QueueInfo } from "./models/queue-stats.js";
export type { StoredError } from "./models/failed-execution.js";
export type { Supervisor, StopOptions } from "./supervisor/supervisor.js";
export type { LifecycleHooks, ProcessInfo, ErrorContext } from "./processes/hooks.js";
export type { DrainOptions } from "./facade/drain.js";
export type { RecurringTaskOptions, RecurringTasksOptions } from "./definitions/recurring-task.js";
export type { RecurringTaskInfo, RecurringOperations } from "./facade/recurring-operations.js";
export type { SchedulerOptions } from "./facade/scheduler-options.js";
export type { Duration, DurationString, DurationUnit } from "./duration.js";
export { isDuration } from "./duration.js";
export type { Backoff, RetryOptions, RetryPolicy } from "./definitions/retry-policy.js";
export type { FailedJobInfo, FailedJobFilter } from "./lifecycle/failed-jobs.js";
export type { FailedJobOperations, ListFailedJobsOptions, BatchOptions } from "./facade/failed-job-operations.js";
export type { ClearQueueOptions, QueueOperations } from "./facade/queue-operations.js";
export type { QueueRateLimit } from "./facade/queue-rate-limits.js";
export type { ClearFinishedJobsOptions } from "./facade/clear-finished-jobs.js";
export type { Logger, LogLevel } from "./logger.js";
export { consoleLogger, silentLogger } from "./logger.js";
export type {
  JobEvents,
  JobEventMap,
  JobEventName,
  JobEventListener,
  JobEventBase,
  JobAttemptEvent,
  JobRunEvent,
  JobFailureEvent,
  BatchEndedEvent,
  BatchEndState,
} from "./job-events.js";
export { JOB_EVENT_NAMES } from "./job-events.js";
export type { JobMiddleware, MiddlewareContext } from "./definitions/job-definition.js";
export { MiddlewareError } from "./definitions/job-middleware.js";
export {
  FirmQueueError,
  ConfigurationError,
  DatabaseUrlError,
  SerializationError,
  DeserializationError,
  UnknownJobError,
  JobNotImplementedError,
  UndeclaredJobError,
  InvalidJobArgumentsError,
  DuplicateJobError,
  JobNotFoundError,
  JobFailedError,
  JobCancelledError,
  WaitTimeoutError,
  JobDeletedWhileAwaitedError,
  JobDroppedError,
  InvalidDependencyError,
  InvalidFlowError,
  InvalidBatchError,
  BatchEndedError,
  ClosedError,
  UnrecoverableError,
  TimeoutError,
  JobNotFailedError,
  JobRunningError,
  ProcessExitError,
  ProcessPrunedError,
  ProcessMissingError,
  ProcessRowGoneError,
  ChildProcessError,
  RecurringTaskError,
  DatabaseTimeoutError,
  ReadOnlyDatabaseError,
  ReadUrlError,
  ResultTooLargeError,
  ResultNotSerializableError,
} from "./errors.js";
export { RateLimitedError } from "./rate-limited-error.js";
export type { RateLimitedOptions } from "./rate-limited-error.js";
export { defineConfig } from "./cli/config.js";
export type { FirmQueueConfig } from "./cli/config.js";
export {
  fromPg,
  fromMysql2,
  fromBetterSqlite3,
  fromKnex,
  fromDrizzle,
  fromPrisma,
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
export { UnsupportedDriverError } from "./database/sqlite-driver.js";
export type {
  JobInspection,
  ListJobsOptions,
  ThroughputOptions,
  QueueThroughputOptions,
  RateLimitsOptions,
  RecurringTaskDetail,
  JobDetailOptions,
} from "./facade/job-inspection.js";
export type {
  BatchCallbackInfo,
  BatchDetail,
  BatchJobsOptions,
  BatchPage,
  ListBatchesOptions,
} from "./facade/batch-inspection.js";
export type { BatchJobSummary, BatchSummary } from "./models/batch-listing.js";
export type { JobBatchLink, JobRelations, RelatedJob } from "./models/job-relations.js";
export type { JobSummary, JobPage } from "./models/job-listing.js";
export type { JobDetail, TimelineEvent } from "./models/job-timeline.js";
export type { QueueCounts } from "./models/queue-counts.js";
export type { ProcessDetail } from "./models/process-listing.js";
export type { ProcessRow, ProcessKind } from "./models/process.js";
export type { RecurringRun } from "./models/recurring-runs.js";
export type { SemaphoreUsage } from "./models/semaphore-usage.js";
export type { RateBudgetUsage } from "./models/rate-budget-listing.js";
export type { ThroughputBucket } from "./models/throughput.js";
export type { QueueThroughput } from "./models/queue-throughput.js";
export { InvalidCursorError } from "./models/job-cursor.js";
export { RecurringTaskNotFoundError } from "./errors.js";
export type { ArgumentIssue } from "./errors.js";
export { createDashboard } from "./dashboard/adapters.js";
export type { Dashboard, NodeDashboardHandler, FetchDashboardHandler } from "./dashboard/adapters.js";
export { startDashboardServer } from "./dashboard/server.js";
export type { DashboardServer, DashboardServerOptions } from "./dashboard/server.js";
export { dashboardAuthFromEnv } from "./dashboard/options.js";
export type { DashboardOptions, DashboardAuthRequest } from "./dashboard/options.js";
export type { CountJobsOptions } from "./facade/job-inspection.js";
export type { ReadSource } from "./facade/read-routing.js";
export type { ReplicaState } from "./database/replica-state.js";
export type { BoundedCount } from "./models/job-count.js";
export type { FirmMetrics, MetricsOptions } from "./facade/firm-metrics.js";
export { GaugeTimeoutError } from "./facade/firm-metrics.js";
export type { PromRegistry, MetricRegistrar } from "./facade/prom-registry.js";
export type { ProcessHeartbeat } from "./models/process-heartbeats.js";
export { HealthChecks, ReadinessTimeoutError } from "./facade/health-checks.js";
export type { HealthSettings, ProbeResult } from "./facade/health-checks.js";
export { startObservabilityServer } from "./facade/observability-server.js";
export type { ObservabilityServer, ObservabilityServerOptions } from "./facade/observability-server.js";
