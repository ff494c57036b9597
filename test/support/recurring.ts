import { JobPolicies } from "../../src/definitions/job-policies.js";
import type { Logger } from "../../src/index.js";
import type { Db } from "../../src/database/dialect.js";
import type { Database } from "../../src/database/connection.js";
import { toDate } from "../../src/database/schema.js";
import { resolveJobOptions, type JobOptions } from "../../src/definitions/job-definition.js";
import { JobRegistry } from "../../src/definitions/job-registry.js";
import { resolveRecurringTasks, type RecurringTasksOptions } from "../../src/definitions/recurring-task.js";
import type { EnqueueJobs } from "../../src/roles/recurring-tick.js";
import { Scheduler } from "../../src/roles/scheduler.js";

/** A logger that keeps its lines, to assert that nothing went wrong (or that something did). */
export function capturingLogger(): Logger & {
  lines: { level: string; message: string; fields?: Record<string, unknown> }[];
} {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, ...(fields ? { fields } : {}) });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** Recurring executions joined with their jobs, oldest tick first. */
export async function recurringJobs(db: Db) {
  const rows = await db
    .selectFrom("firm_queue_recurring_executions as e")
    .innerJoin("firm_queue_jobs as j", "j.id", "e.job_id")
    .select([
      "e.task_key",
      "e.run_at",
      "e.job_id",
      "j.class_name",
      "j.queue_name",
      "j.priority",
      "j.scheduled_at",
      "j.arguments",
    ])
    .orderBy("e.run_at")
    .orderBy("e.task_key")
    .execute();
  return rows.map((row) => ({
    task: row.task_key,
    runAt: toDate(row.run_at).toISOString(),
    jobId: Number(row.job_id),
    job: row.class_name,
    queue: row.queue_name,
    priority: row.priority,
    scheduledAt: toDate(row.scheduled_at)!.toISOString(),
    arguments: row.arguments,
  }));
}

/** A settable clock for driving a Scheduler through fixed dates. */
export class FakeClock {
  private ms: number;
  constructor(start: string) {
    this.ms = Date.parse(start);
  }
  set(iso: string): number {
    this.ms = Date.parse(iso);
    return this.ms;
  }
  get now(): number {
    return this.ms;
  }
  readonly read = (): number => this.ms;
}

/**
 * A Scheduler on `database` driven by `clock` (call `prepare()` and `step()` yourself; it is
 * never started). Jobs are defined in a registry of its own.
 */
export function testScheduler(
  database: Database,
  options: {
    clock: FakeClock;
    recurring?: RecurringTasksOptions | null;
    jobs?: Record<string, JobOptions>;
    dynamicTasks?: boolean;
    pollingInterval?: number;
    enqueue?: EnqueueJobs;
    logger?: Logger;
  },
): Scheduler {
  const registry = new JobRegistry();
  for (const [name, jobOptions] of Object.entries(options.jobs ?? { tick: {} })) {
    registry.add({ name, handler: async () => {}, options: resolveJobOptions(name, jobOptions) });
  }
  const logger = options.logger ?? capturingLogger();
  return new Scheduler(
    { dynamicTasks: options.dynamicTasks ?? false, pollingInterval: options.pollingInterval ?? 5000 },
    {
      database,
      registry,
      policies: new JobPolicies(registry, logger),
      staticTasks: options.recurring === null ? null : resolveRecurringTasks(options.recurring ?? {}, registry.names()),
      logger,
      onError: (error) => logger.error("scheduler error", { error }),
      now: options.clock.read,
      ...(options.enqueue ? { enqueue: options.enqueue } : {}),
    },
  );
}
