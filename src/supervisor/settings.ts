import type { DispatcherSettings } from "../roles/dispatcher.js";
import type { SchedulerSettings } from "../roles/scheduler.js";
import type { WorkerSettings } from "../roles/worker.js";

/*
 * What a supervisor runs, checked and with every default filled in. The facade builds these from
 * the user's `start()` options (facade/options.ts); the CLI from its config file and flags.
 */

/** A worker to run, times `processes`. */
export interface ResolvedWorker extends WorkerSettings {
  readonly processes: number;
  /** Fork mode: node flags for each of this worker's child processes, after the supervisor's own. */
  readonly execArgv: readonly string[];
}

/** A dispatcher to run. */
export interface ResolvedDispatcher extends DispatcherSettings {
  /** Least time between two passes deleting old finished jobs, in ms. */
  readonly clearFinishedJobsInterval: number;
  /** Finished jobs deleted per transaction. */
  readonly clearFinishedJobsBatchSize: number;
}

/** Everything a supervisor needs to start its roles. */
export interface ResolvedStartOptions {
  readonly mode: "async" | "fork";
  readonly require: readonly string[] | undefined;
  readonly workers: readonly ResolvedWorker[];
  readonly dispatchers: readonly ResolvedDispatcher[];
  readonly shutdownTimeout: number;
  readonly processHeartbeatInterval: number;
  readonly processAliveThreshold: number;
  /** Null: this start runs no scheduler. The `recurring` tasks are checked by `resolveRecurringTasks`. */
  readonly scheduler: SchedulerSettings | null;
}
