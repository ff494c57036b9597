import type { Database } from "../database/connection.js";
import { toDate } from "../database/schema.js";
import { retryTransient } from "../database/transient-errors.js";
import {
  deleteDynamicRecurringTask,
  isTaskKeyConflict,
  listRecurringTaskRows,
  saveDynamicRecurringTask,
  taskFieldsOf,
  taskFromRow,
} from "../models/recurring-task.js";
import { readableArguments } from "../serialization.js";
import {
  resolveRecurringTask,
  scheduleOf,
  type RecurringTask,
  type RecurringTaskOptions,
} from "../definitions/recurring-task.js";
import { RecurringTaskNotFoundError } from "../errors.js";
import { runRecurringTaskNow, type RunNowContext } from "./run-now.js";

/** One recurring task as `firm.recurring.list()` and `firm-queue recurring` show it. */
export interface RecurringTaskInfo extends Omit<RecurringTask, "arguments"> {
  /** The decoded arguments given to each tick's job. */
  readonly args: unknown;
  /** The next tick after now; null when the schedule has none or cannot be read here. */
  readonly nextRunAt: Date | null;
  /** The latest tick fired (its job enqueued, or dropped by concurrency controls); null before the first. */
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
    await retryTransient(
      (error) => isTaskKeyConflict(database.dialect, error),
      () => database.writeTransaction((trx) => saveDynamicRecurringTask(trx, checked, database.clock.now())),
    );
    this.onChange();
  }

  /** Remove a dynamic task; false when there was none. A declared (static) task's key is refused. */
  async unschedule(key: string): Promise<boolean> {
    const database = await this.database();
    const removed = await database.writeTransaction((trx) => deleteDynamicRecurringTask(trx, key));
    if (removed) this.onChange();
    return removed;
  }

  /**
   * Enqueue a task's job now, outside its schedule (its next scheduled run still happens), with
   * the task's arguments, queue and priority; recorded as a run of the task. Returns the job id,
   * or null when the job's concurrency controls dropped it. An unknown key throws
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
    const database = await this.database();
    const rows = await listRecurringTaskRows(database.db);
    const now = database.clock.now();
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
