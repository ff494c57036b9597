import type { Database } from "../database/connection.js";
import { requireCurrentSchema } from "../database/schema-version.js";
import { resolveRecurringTasks } from "../definitions/recurring-task.js";
import { ConfigurationError } from "../errors.js";
import { AsyncSupervisor } from "../supervisor/async-supervisor.js";
import type { BaseSupervisor } from "../supervisor/base-supervisor.js";
import { connectionBudget } from "../supervisor/connection-budget.js";
import { ForkSupervisor } from "../supervisor/fork-supervisor.js";
import { planRoles } from "../supervisor/role-table.js";
import { retryStart } from "../supervisor/start-retry.js";
import type { SupervisorDependencies } from "../supervisor/supervisor.js";
import { resolveStartOptions, type StartOptions } from "./options.js";

/** What `firm.start()` needs of its instance. */
export interface StartContext {
  /** What every supervisor of the instance shares (the database and recurring tasks are per start). */
  readonly shared: Omit<SupervisorDependencies, "database" | "recurringTasks">;
  /** Whether the instance was given the application's own database handle (fork mode cannot use it). */
  readonly ownHandle: boolean;
  /** The instance's `poolSize` option (null: sized by the connection budget). */
  readonly poolSize: number | null;
  readonly jobNames: readonly string[];
  database(poolSize: number): Promise<Database>;
}

/**
 * Check the start options and recurring tasks, open the database sized for the roles, and start
 * the supervisor in this process or as a fork-mode parent.
 */
export async function startSupervisor(context: StartContext, options?: StartOptions): Promise<BaseSupervisor> {
  const settings = resolveStartOptions(options);
  const recurringTasks =
    options?.recurring === undefined ? null : resolveRecurringTasks(options.recurring, context.jobNames);
  if (settings.mode === "fork" && context.ownHandle) {
    throw new ConfigurationError(
      "Fork mode opens the database in each child process: give a databaseUrl rather than a database handle",
    );
  }
  // Fork mode: this process only supervises; each child sizes its own pool for its role.
  const budget = connectionBudget(
    settings,
    settings.mode === "fork" ? [] : planRoles(settings, recurringTasks),
    context.poolSize,
    false,
  );
  const database = await retryStart("connecting to the database", context.shared.logger, async () => {
    const opened = await context.database(budget.processes[0]!.pool);
    await requireCurrentSchema(opened);
    return opened;
  });
  context.shared.logger.info("using database", { database: database.displayUrl });
  const deps: SupervisorDependencies = { ...context.shared, database, recurringTasks };
  return settings.mode === "fork" ? ForkSupervisor.start(settings, deps) : AsyncSupervisor.start(settings, deps);
}
