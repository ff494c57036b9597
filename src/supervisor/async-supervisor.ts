import { randomBytes } from "node:crypto";
import type { ResolvedStartOptions } from "../configuration.js";
import type { Database } from "../database/connection.js";
import { Dispatcher } from "../dispatcher.js";
import type { JobRegistry } from "../job-registry.js";
import type { Logger } from "../logger.js";
import { releaseClaims } from "../models/claimed-execution.js";
import { deleteProcess, registerProcess, type ProcessKind } from "../models/process.js";
import { Heartbeat } from "../processes/heartbeat.js";
import type { Poller } from "../processes/poller.js";
import type { RecurringTask } from "../recurring/config.js";
import { Scheduler } from "../scheduler.js";
import { Worker } from "../worker.js";

/** What the supervisor needs from the FirmQueue that started it. */
export interface SupervisorDependencies {
  readonly database: Database;
  readonly registry: JobRegistry;
  readonly preserveFinishedJobs: boolean;
  readonly logger: Logger;
  /** Checked `recurring` tasks for the scheduler; null or absent leaves static tasks alone. */
  readonly recurringTasks?: readonly RecurringTask[] | null;
}

/** A running set of roles, returned by `firm.start()`. */
export interface Supervisor {
  /** The supervisor's row id in `firm_queue_processes`. */
  readonly id: number;
  /** Stop gracefully: stop claiming, let running jobs end (up to `shutdownTimeout`), deregister. */
  stop(): Promise<void>;
}

/**
 * Runs every configured role inside this process: workers run jobs as concurrent promises on
 * this event loop. Each role registers its own process row and heartbeats it.
 */
export class AsyncSupervisor implements Supervisor {
  private readonly workers: Worker[] = [];
  private readonly dispatchers: Dispatcher[] = [];
  private readonly schedulers: Scheduler[] = [];
  private readonly heartbeats: Heartbeat[] = [];
  private readonly processIds: number[] = [];
  private stopping: Promise<void> | undefined;

  private constructor(
    readonly id: number,
    private readonly settings: ResolvedStartOptions,
    private readonly deps: SupervisorDependencies,
  ) {}

  static async start(settings: ResolvedStartOptions, deps: SupervisorDependencies): Promise<AsyncSupervisor> {
    const supervisorId = await registerProcess(deps.database.db, { kind: "Supervisor", name: processName("supervisor"), metadata: { mode: "async" } }, new Date());
    const supervisor = new AsyncSupervisor(supervisorId, settings, deps);
    supervisor.processIds.push(supervisorId);
    supervisor.watch(supervisorId);
    try {
      await supervisor.startRoles();
    } catch (error) {
      await supervisor.stop();
      throw error;
    }
    deps.logger.info("supervisor started", {
      supervisorId,
      mode: "async",
      workers: settings.workers.length,
      dispatchers: settings.dispatchers.length,
      scheduler: settings.scheduler !== null,
    });
    return supervisor;
  }

  stop(): Promise<void> {
    return (this.stopping ??= this.shutdown());
  }

  /** Tell this supervisor's scheduler that a dynamic recurring task changed. */
  reloadRecurringTasks(): void {
    for (const scheduler of this.schedulers) scheduler.reloadSoon();
  }

  private async startRoles(): Promise<void> {
    const { database, logger } = this.deps;
    for (const worker of this.settings.workers) {
      const processId = await this.register("Worker", { queues: worker.queues, concurrency: worker.concurrency });
      const role = new Worker(worker, {
        database,
        registry: this.deps.registry,
        processId,
        preserveFinishedJobs: this.deps.preserveFinishedJobs,
        logger,
        onError: (error) => logger.error("worker error", { processId, error }),
      });
      this.workers.push(role);
      this.run(role, processId);
    }
    for (const dispatcher of this.settings.dispatchers) {
      const processId = await this.register("Dispatcher", { batchSize: dispatcher.batchSize });
      const role = new Dispatcher(dispatcher, database, logger, (error) => logger.error("dispatcher error", { processId, error }));
      this.dispatchers.push(role);
      this.run(role, processId);
    }
    if (this.settings.scheduler) await this.startScheduler(this.settings.scheduler);
  }

  private async startScheduler(settings: NonNullable<ResolvedStartOptions["scheduler"]>): Promise<void> {
    const { database, logger } = this.deps;
    const staticTasks = this.deps.recurringTasks ?? null;
    const processId = await this.register("Scheduler", {
      staticTasks: staticTasks?.length ?? null,
      dynamicTasks: settings.dynamicTasks,
    });
    const role = new Scheduler(settings, {
      database,
      registry: this.deps.registry,
      staticTasks,
      logger,
      onError: (error) => logger.error("scheduler error", { processId, error }),
    });
    this.schedulers.push(role);
    await role.prepare();
    this.run(role, processId);
  }

  private async register(kind: ProcessKind, metadata: Record<string, unknown>): Promise<number> {
    const processId = await registerProcess(
      this.deps.database.db,
      { kind, name: processName(kind.toLowerCase()), supervisorId: this.id, metadata },
      new Date(),
    );
    this.processIds.push(processId);
    return processId;
  }

  private run(role: Poller, processId: number): void {
    role.start();
    this.watch(processId);
  }

  private watch(processId: number): void {
    const { database, logger } = this.deps;
    const heartbeat = new Heartbeat(
      database,
      processId,
      this.settings.processHeartbeatInterval,
      () => {
        logger.error("process row was removed (pruned as dead?); stopping", { processId });
        void this.stop();
      },
      (error) => logger.error("heartbeat failed", { processId, error }),
    );
    this.heartbeats.push(heartbeat);
    heartbeat.start();
  }

  private async shutdown(): Promise<void> {
    const { database, logger } = this.deps;
    logger.info("supervisor stopping", { supervisorId: this.id });
    await Promise.all([...this.schedulers, ...this.dispatchers].map((role) => role.stopPolling()));
    await Promise.all(this.workers.map((worker) => worker.shutdown(this.settings.shutdownTimeout)));
    await Promise.all(this.heartbeats.map((heartbeat) => heartbeat.stopPolling()));
    for (const processId of this.processIds.reverse()) {
      // Nothing should be claimed any more; anything left goes back in line before the row goes.
      await releaseClaims(database, processId);
      await deleteProcess(database.db, processId);
    }
    logger.info("supervisor stopped", { supervisorId: this.id });
  }
}

function processName(kind: string): string {
  return `${kind}-${randomBytes(6).toString("hex")}`;
}
