export { FirmQueue } from "./firm-queue.js";
export { Job } from "./job.js";
export type { FirmQueueOptions, StartOptions, WorkerOptions, DispatcherOptions } from "./configuration.js";
export type { JobContext, JobHandler, JobOptions, EnqueueOptions } from "./job-definition.js";
export type { JobInfo, JobState } from "./models/job-info.js";
export type { QueueInfo } from "./models/queue-stats.js";
export type { StoredError } from "./models/failed-execution.js";
export type { Supervisor } from "./supervisor/async-supervisor.js";
export type { DrainOptions } from "./drain.js";
export type { RecurringTaskOptions, RecurringTasksOptions } from "./recurring/config.js";
export type { RecurringTaskInfo, RecurringOperations } from "./recurring/operations.js";
export type { SchedulerOptions } from "./recurring/scheduler-options.js";
export type { Duration } from "./duration.js";
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
  RecurringTaskError,
} from "./errors.js";
