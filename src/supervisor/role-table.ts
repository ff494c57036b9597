import type { ResolvedDispatcher, ResolvedWorker } from "./settings.js";
import type { Database } from "../database/connection.js";
import { Dispatcher } from "../roles/dispatcher.js";
import { FinishedJobCleanup } from "../roles/finished-job-cleanup.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import type { Logger } from "../logger.js";
import type { ProcessKind } from "../models/process.js";
import type { RecurringTask } from "../definitions/recurring-task.js";
import { Scheduler, type SchedulerSettings } from "../roles/scheduler.js";
import { Worker } from "../roles/worker.js";

/**
 * One role to run, as plain data: a supervisor plans a list of these from its settings, then
 * runs each in-process (async mode) or sends it to a child process (fork mode). A new role (the
 * scheduler) adds a variant here and an entry in {@link ROLES}.
 */
export type RoleSpec =
  | { readonly role: "worker"; readonly settings: ResolvedWorker }
  | { readonly role: "dispatcher"; readonly settings: ResolvedDispatcher }
  | { readonly role: "scheduler"; readonly settings: SchedulerRoleSettings };

/**
 * A scheduler's settings and the configuration's recurring tasks, checked by the supervisor
 * (plain data, so a fork-mode child receives them as they are). Null tasks: none were declared,
 * and the static rows in the table are left alone.
 */
export interface SchedulerRoleSettings extends SchedulerSettings {
  readonly staticTasks: readonly RecurringTask[] | null;
}

/** What a running role needs from the process hosting it. */
export interface RoleContext {
  readonly database: Database;
  readonly registry: JobRegistry;
  readonly policies: JobPolicies;
  readonly processId: number;
  readonly preserveFinishedJobs: boolean;
  /** Ms after which dispatchers delete finished jobs; null for never. */
  readonly clearFinishedJobsAfter: number | null;
  readonly logger: Logger;
  /** Report an error in this role's machinery (a failed poll): goes to the onError hooks. */
  readonly onError: (error: unknown) => void;
  /** The process's row was found gone (a claim was refused): the host stops and replaces it. */
  readonly onProcessLost?: () => void;
}

/** A started role: a poller that can shut down, waiting up to `timeout` ms for work in flight. */
export interface RoleRunner {
  /** Get ready before the first poll (the scheduler syncs its static tasks here). */
  prepare?(): Promise<void>;
  start(): void;
  shutdown(timeout: number): Promise<unknown>;
  /** A shutdown under way should stop waiting for running work now (SIGQUIT during a graceful stop). */
  hurry?(): void;
  /** After shutdown: jobs that ran but whose outcome could not be recorded; deregistering keeps their claims. */
  unrecordedJobIds?(): readonly number[];
  /** Look again at what changed in the database now (the scheduler re-reads dynamic tasks). */
  reload?(): void;
}

interface RoleDefinition<Settings> {
  readonly kind: ProcessKind;
  /** What the process row's metadata says about this role. */
  metadata(settings: Settings): Record<string, unknown>;
  create(settings: Settings, context: RoleContext): RoleRunner;
}

type RoleTable = { readonly [R in RoleSpec["role"]]: RoleDefinition<Extract<RoleSpec, { role: R }>["settings"]> };

/** Every role a supervisor can run. */
export const ROLES: RoleTable = {
  worker: {
    kind: "Worker",
    metadata: (settings) => ({
      queues: settings.queues,
      concurrency: settings.concurrency,
      pollingInterval: settings.pollingInterval,
    }),
    create: (settings, context) => new Worker(settings, context),
  },
  dispatcher: {
    kind: "Dispatcher",
    metadata: (settings) => ({
      batchSize: settings.batchSize,
      pollingInterval: settings.pollingInterval,
      concurrencyMaintenanceInterval: settings.concurrencyMaintenanceInterval,
    }),
    create(settings, context) {
      const after = context.clearFinishedJobsAfter;
      const cleanup =
        after === null
          ? undefined
          : new FinishedJobCleanup(
              { after, interval: settings.clearFinishedJobsInterval, batchSize: settings.clearFinishedJobsBatchSize },
              context.database,
              context.logger,
            );
      const dispatcher = new Dispatcher(
        settings,
        context.database,
        context.policies,
        context.logger,
        context.onError,
        cleanup,
      );
      return { start: () => dispatcher.start(), shutdown: () => dispatcher.stopPolling() };
    },
  },
  scheduler: {
    kind: "Scheduler",
    metadata: (settings) => ({
      staticTasks: settings.staticTasks?.length ?? null,
      dynamicTasks: settings.dynamicTasks,
    }),
    create(settings, context) {
      const { staticTasks, ...schedulerSettings } = settings;
      const scheduler = new Scheduler(schedulerSettings, {
        database: context.database,
        registry: context.registry,
        policies: context.policies,
        staticTasks,
        // Ticks are compared across schedulers (one fires each): time them by the database's clock.
        now: () => context.database.clock.now().getTime(),
        logger: context.logger,
        onError: context.onError,
      });
      return {
        prepare: () => scheduler.prepare(),
        start: () => scheduler.start(),
        shutdown: () => scheduler.stopPolling(),
        reload: () => scheduler.reloadSoon(),
      };
    },
  },
};

/** The table entry for a spec, typed loosely so callers need not switch on the role. */
export function roleDefinition(spec: RoleSpec): RoleDefinition<unknown> {
  return ROLES[spec.role] as RoleDefinition<unknown>;
}

/**
 * The roles a supervisor runs: each worker times its `processes`, then each dispatcher, then the
 * scheduler when there is one (with the recurring tasks it runs).
 */
export function planRoles(
  settings: {
    readonly workers: readonly ResolvedWorker[];
    readonly dispatchers: readonly ResolvedDispatcher[];
    readonly scheduler: SchedulerSettings | null;
  },
  recurringTasks: readonly RecurringTask[] | null = null,
): RoleSpec[] {
  const specs: RoleSpec[] = [];
  for (const worker of settings.workers) {
    for (let copy = 0; copy < worker.processes; copy++) specs.push({ role: "worker", settings: worker });
  }
  for (const dispatcher of settings.dispatchers) specs.push({ role: "dispatcher", settings: dispatcher });
  if (settings.scheduler)
    specs.push({ role: "scheduler", settings: { ...settings.scheduler, staticTasks: recurringTasks } });
  return specs;
}
