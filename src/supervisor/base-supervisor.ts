import type { ResolvedStartOptions } from "./settings.js";
import { ProcessPruner } from "../processes/process-pruner.js";
import { RegisteredRole } from "./registered-role.js";
import { planRoles } from "./role-table.js";
import type { StopOptions, Supervisor, SupervisorDependencies } from "./supervisor.js";

/**
 * What both supervisors share: their own process row and heartbeat, start/stop/exit hooks, and
 * the maintenance loop that prunes dead processes and recovers their claims (a first pass runs
 * at boot). Subclasses start and stop the roles.
 */
export abstract class BaseSupervisor implements Supervisor {
  abstract readonly mode: "async" | "fork";
  readonly stopped: Promise<void>;
  protected self!: RegisteredRole;
  private pruner: ProcessPruner | undefined;
  private stopping: Promise<void> | undefined;
  private markStopped!: () => void;

  protected constructor(
    protected readonly settings: ResolvedStartOptions,
    protected readonly deps: SupervisorDependencies,
  ) {
    this.stopped = new Promise((resolve) => (this.markStopped = resolve));
  }

  get id(): number {
    return this.self.info.id;
  }

  get roleCount(): number {
    return planRoles(this.settings, this.deps.recurringTasks).length;
  }

  /** Whether stop() has been called (or the supervisor's row was lost). */
  protected get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  stop(options: StopOptions = {}): Promise<void> {
    return this.stopBecause("stop() was called", options.immediate ?? false);
  }

  /** Stop, logging `reason` (the decision that ends the supervisor) with the first stop. */
  protected stopBecause(reason: string, immediate: boolean): Promise<void> {
    if (this.stopping) {
      if (immediate) this.escalate();
      return this.stopping;
    }
    return (this.stopping = this.shutdown(immediate, reason));
  }

  /** Register, run start hooks, recover what dead processes left, then start the roles. */
  protected async boot(metadata: Record<string, unknown>): Promise<void> {
    const { database, hooks, logger } = this.deps;
    this.self = await RegisteredRole.register(
      { kind: "Supervisor", supervisorId: null, metadata },
      {
        database,
        policies: this.deps.policies,
        hooks,
        logger,
        heartbeatInterval: this.settings.processHeartbeatInterval,
        onLost: () => void this.stopBecause("its process row is gone (pruned as dead)", false),
      },
    );
    await this.self.begin();
    this.pruner = new ProcessPruner(
      database,
      this.deps.policies,
      {
        aliveThreshold: this.settings.processAliveThreshold,
        interval: this.settings.processHeartbeatInterval,
        ownProcessId: this.id,
        supervisedInProcess: this.mode === "async",
      },
      logger,
      hooks.reporter(() => ({ process: this.self.info, where: "pruning dead processes" })),
    );
    // The first pass runs at once: claims left by processes that died while nothing ran are
    // recovered before this supervisor's workers start claiming.
    await this.pruner
      .recoverNow()
      .catch((error: unknown) => hooks.error(error, { process: this.self.info, where: "recovering at boot" }));
    try {
      await this.startRoles();
    } catch (error) {
      await this.stopBecause("its roles could not start", true);
      throw error;
    }
    this.pruner.start();
  }

  /**
   * A dynamic recurring task changed in this process. Schedulers re-read the table every
   * polling interval anyway; a supervisor whose scheduler runs here can tell it sooner.
   */
  reloadRecurringTasks(): void {}

  /** Start every role. */
  protected abstract startRoles(): Promise<void>;
  /** Stop every role, gracefully or at once. */
  protected abstract stopRoles(immediate: boolean): Promise<void>;
  /** A SIGQUIT arrived while a graceful stop is under way. */
  protected escalate(): void {}

  private async shutdown(immediate: boolean, reason: string): Promise<void> {
    const { logger } = this.deps;
    logger.info("supervisor stopping", { supervisorId: this.id, mode: this.mode, immediate, reason });
    await this.pruner?.stopPolling();
    await this.self.stop(0, () => this.stopRoles(immediate), reason);
    logger.info("supervisor stopped", { supervisorId: this.id });
    this.markStopped();
  }
}
