import type { Database } from "../database/connection.js";
import { toDate } from "../database/schema.js";
import { RecurringTaskNotFoundError } from "../errors.js";
import { deleteDynamicRecurringTask, listRecurringTaskRows, saveDynamicRecurringTask, taskFieldsOf, taskFromRow } from "../models/recurring-task.js";
import { readableArguments } from "../serialization.js";
import { resolveRecurringTask, scheduleOf, type RecurringTaskOptions } from "./config.js";
import { runRecurringTaskNow, type RunNowContext } from "./run-now.js";

/** One recurring task as `firm.recurring.list()` and `firm-queue recurring` show it. */
export interface RecurringTaskInfo {
  readonly key: string;
  readonly job: string;
  readonly args: unknown;
  readonly schedule: string;
  readonly timezone: string;
  /** Null: the job definition's queue. */
  readonly queue: string | null;
  /** Null: the job definition's priority. */
  readonly priority: number | null;
  readonly description: string | null;
  /** True when declared in configuration, false when added with `schedule()`. */
  readonly static: boolean;
  /** The next tick after now; null when the schedule has none or cannot be read here. */
  readonly nextRunAt: Date | null;
  /** The latest tick fired (its job enqueued, or discarded by concurrency controls); null before the first. */
  readonly lastRunAt: Date | null;
  /** Why the stored task cannot run (a bad schedule written by hand), if it cannot. */
  readonly problem?: string;
}

/** `firm.recurring`: add, remove and list recurring tasks at run time. */
export class RecurringOperations {
  constructor(
    private readonly database: () => Promise<Database>,
    private readonly jobNames: () => string[],
    private readonly onChange: () => void,
    private readonly runNowContext: RunNowContext,
  ) {}

  /**
   * Add or replace a dynamic task. Schedulers started with `scheduler: { dynamicTasks: true }`
   * pick it up at their next poll (this process's own at once). The job must be defined on this
   * instance, and the task is checked like a declared one; a key that belongs to a declared
   * (static) task is refused.
   */
  async schedule(key: string, task: RecurringTaskOptions): Promise<void> {
    const checked = resolveRecurringTask(key, task, this.jobNames(), false);
    const database = await this.database();
    await saveDynamicRecurringTask(database, checked, new Date());
    this.onChange();
  }

  /** Remove a dynamic task; false when there was none. A declared (static) task's key is refused. */
  async unschedule(key: string): Promise<boolean> {
    const database = await this.database();
    const removed = await deleteDynamicRecurringTask(database, key);
    if (removed) this.onChange();
    return removed;
  }

  /**
   * Enqueue a task's job now, outside its schedule (its next scheduled run still happens), with
   * the task's arguments, queue and priority; recorded as a run of the task. Returns the job id,
   * or null when the job's concurrency controls discarded it. An unknown key throws
   * RecurringTaskNotFoundError.
   */
  async runNow(key: string): Promise<number | null> {
    if (typeof key !== "string" || key === "") throw new RecurringTaskNotFoundError(String(key));
    const database = await this.database();
    const jobId = await runRecurringTaskNow(database, this.runNowContext, key);
    if (jobId !== null) database.jobsReady.notify();
    return jobId;
  }

  /** Every task in the database, static and dynamic, by key, with its next and last run. */
  async list(): Promise<RecurringTaskInfo[]> {
    const { db } = await this.database();
    const rows = await listRecurringTaskRows(db);
    const now = new Date();
    return rows.map((row) => {
      let nextRunAt: Date | null = null;
      let problem: string | undefined;
      try {
        nextRunAt = scheduleOf(taskFromRow(row)).next(now);
      } catch (error) {
        problem = (error as Error).message;
      }
      return {
        ...taskFieldsOf(row),
        args: readableArguments(row.arguments),
        nextRunAt,
        lastRunAt: toDate(row.last_run_at),
        ...(problem ? { problem } : {}),
      };
    });
  }
}

