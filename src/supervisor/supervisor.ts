import type { Database } from "../database/connection.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import type { Logger } from "../logger.js";
import type { HookSet } from "../processes/hooks.js";
import type { RecurringTask } from "../definitions/recurring-task.js";
import type { ChildSamples } from "../metric-samples.js";

/** How to stop a supervisor. */
export interface StopOptions {
  /**
   * `false` (default, SIGTERM/SIGINT): stop claiming, fire running jobs' AbortSignals, wait up to
   * `shutdownTimeout`, then put what is left back in line. `true` (SIGQUIT): put every claimed job
   * back in line at once.
   */
  readonly immediate?: boolean | undefined;
}

/** A running set of roles, returned by `firm.start()`. */
export interface Supervisor {
  /** The supervisor's row id in `firm_queue_processes`. */
  readonly id: number;
  readonly mode: "async" | "fork";
  /** How many role processes it runs (workers times their processes, dispatchers, scheduler), not counting itself. */
  readonly roleCount: number;
  /** Stop (idempotent): roles end their work as {@link StopOptions} says, then everything deregisters. */
  stop(options?: StopOptions): Promise<void>;
  /** Resolves once the supervisor has stopped, whether through `stop()` or because it was pruned. */
  readonly stopped: Promise<void>;
}

/** What a supervisor needs from the FirmQueue that started it. */
export interface SupervisorDependencies {
  readonly database: Database;
  readonly databaseUrl: string;
  readonly registry: JobRegistry;
  /** Concurrency limits and retry policies, by job name. */
  readonly policies: JobPolicies;
  readonly preserveFinishedJobs: boolean;
  /** Ms after which dispatchers delete finished jobs; null for never. */
  readonly clearFinishedJobsAfter: number | null;
  readonly logger: Logger;
  readonly hooks: HookSet;
  /** Files that created the FirmQueue and defined its jobs: what fork-mode children import by default. */
  readonly definitionFiles: readonly string[];
  /** Checked `recurring` tasks for the scheduler; null leaves the static tasks in the table alone. */
  readonly recurringTasks: readonly RecurringTask[] | null;
  /** Job metrics: whether this process counts (then fork children count too), and where children's counts go. */
  readonly metrics: { readonly isEnabled: boolean; readonly children: ChildSamples };
}
