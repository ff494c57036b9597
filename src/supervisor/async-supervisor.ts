import type { ResolvedStartOptions } from "./settings.js";
import { RegisteredRole } from "./registered-role.js";
import { planRoles, roleDefinition, type RoleRunner, type RoleSpec } from "./role-table.js";
import { BaseSupervisor } from "./base-supervisor.js";
import type { SupervisorDependencies } from "./supervisor.js";

/**
 * Runs every configured role inside this process: workers run jobs as concurrent promises on
 * this event loop. Each role registers its own process row (supervised by this one) and
 * heartbeats it. A role whose row was pruned stops and is replaced by a fresh one.
 */
export class AsyncSupervisor extends BaseSupervisor {
  readonly mode = "async" as const;
  /** Running roles, with what runs inside each. */
  private readonly roles = new Map<RegisteredRole, RoleRunner>();
  /** Replacements being started: a stop waits for them, so none starts after it. */
  private readonly replacing = new Set<Promise<void>>();

  static async start(settings: ResolvedStartOptions, deps: SupervisorDependencies): Promise<AsyncSupervisor> {
    const supervisor = new AsyncSupervisor(settings, deps);
    await supervisor.boot({ mode: "async" });
    deps.logger.info("supervisor started", {
      supervisorId: supervisor.id,
      mode: "async",
      workers: settings.workers.reduce((sum, worker) => sum + worker.processes, 0),
      dispatchers: settings.dispatchers.length,
      scheduler: settings.scheduler !== null,
    });
    return supervisor;
  }

  protected async startRoles(): Promise<void> {
    for (const spec of planRoles(this.settings, this.deps.recurringTasks)) await this.startRole(spec);
  }

  protected async stopRoles(immediate: boolean): Promise<void> {
    const timeout = immediate ? 0 : this.settings.shutdownTimeout;
    // A replacement registering now sees the stop once registered and stops itself (startRole).
    await Promise.allSettled([...this.replacing]);
    await Promise.all([...this.roles.keys()].map((role) => role.stop(timeout)));
  }

  private async startRole(spec: RoleSpec): Promise<void> {
    const { database, hooks, logger } = this.deps;
    const definition = roleDefinition(spec);
    const role = await RegisteredRole.register(
      { kind: definition.kind, supervisorId: this.id, metadata: definition.metadata(spec.settings) },
      {
        database,
        policies: this.deps.policies,
        hooks,
        logger,
        heartbeatInterval: this.settings.processHeartbeatInterval,
        onLost: (lost) => this.replace(lost, spec),
      },
    );
    if (this.isStopping) {
      // The supervisor began stopping while this role registered: it must not run.
      await role.stop(0);
      return;
    }
    const runner = definition.create(spec.settings, {
      database,
      registry: this.deps.registry,
      policies: this.deps.policies,
      processId: role.info.id,
      preserveFinishedJobs: this.deps.preserveFinishedJobs,
      clearFinishedJobsAfter: this.deps.clearFinishedJobsAfter,
      logger,
      onError: hooks.reporter(() => ({ process: role.info, where: `${definition.kind.toLowerCase()} poll` })),
      onProcessLost: () => role.markLost(),
    });
    this.roles.set(role, runner);
    await role.begin(runner);
  }

  /** A dynamic recurring task changed in this process: the scheduler looks at once. */
  override reloadRecurringTasks(): void {
    for (const runner of this.roles.values()) runner.reload?.();
  }

  /** A role's row was pruned: its claims are gone, so stop it now and start a fresh one. */
  private replace(role: RegisteredRole, spec: RoleSpec): void {
    this.roles.delete(role);
    const replacing: Promise<void> = role.stop(0).then(async () => {
      if (this.isStopping) return;
      await this.startRole(spec).catch((error: unknown) =>
        this.deps.hooks.error(error, { process: this.self.info, where: "restarting a role" }),
      );
    });
    this.replacing.add(replacing);
    void replacing.finally(() => this.replacing.delete(replacing));
  }
}
