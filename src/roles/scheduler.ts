import type { Database } from "../database/connection.js";
import { toDate } from "../database/schema.js";
import { resolveJobOptions, type ResolvedJobOptions } from "../definitions/job-definition.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import type { Logger } from "../logger.js";
import { retryTransient } from "../database/transient-errors.js";
import {
  isTaskKeyConflict,
  listRecurringTaskRows,
  syncStaticRecurringTasks,
  taskFromRow,
  type RecurringTaskRow,
} from "../models/recurring-task.js";
import { Poller, UNTIL_WOKEN } from "../processes/poller.js";
import { scheduleOf, type RecurringTask } from "../definitions/recurring-task.js";
import type { CronSchedule } from "../definitions/schedule.js";
import { enqueueRecurringTick, type EnqueueJobs } from "./recurring-tick.js";

/** A scheduler's settings, defaults filled in. */
export interface SchedulerSettings {
  /** Whether to run tasks added with `firm.recurring.schedule()` too. */
  readonly dynamicTasks: boolean;
  /** How often to re-read dynamic tasks, in ms. */
  readonly pollingInterval: number;
}

/** What a scheduler needs from the supervisor that runs it. */
export interface SchedulerDependencies {
  readonly database: Database;
  readonly registry: JobRegistry;
  /** Concurrency controls of the jobs it enqueues. */
  readonly policies: JobPolicies;
  /** The configuration's tasks, synced into the table at start; null leaves static rows alone. */
  readonly staticTasks: readonly RecurringTask[] | null;
  readonly logger: Logger;
  readonly onError: (error: unknown) => void;
  /** The clock, in ms since the epoch; tests pass a fake one. */
  readonly now?: () => number;
  /** Enqueue internals; tests stand in for concurrency controls with it. */
  readonly enqueue?: EnqueueJobs;
}

/** One task this scheduler runs, and the next tick it owes. */
interface Entry {
  readonly task: RecurringTask;
  readonly schedule: CronSchedule;
  /** Identity of a dynamic task's definition: a changed row gets a fresh entry. */
  readonly signature: string;
  next: Date | null;
}

/** Sleeping past the planned wake-up by this much means the process was suspended or blocked. */
const STALL_LIMIT_MS = 60_000;
/** Ticks enqueued per poll before the loop yields (and goes again at once). */
const MAX_TICKS_PER_POLL = 100;
/** Delay before retrying a tick that failed (the database is down, say). */
const RETRY_DELAY_MS = 1000;

/**
 * The role that enqueues recurring tasks. It sleeps until the earliest next tick of its tasks,
 * then enqueues every due tick T with run_at = T (see `enqueueRecurringTick`: exactly once across
 * schedulers). A scheduler owes the ticks after it started (or after it first saw a task); ticks
 * from before, when nothing was running, are not caught up. If the process was suspended for
 * more than a minute, each task gets the tick it was waiting for and then resumes from now.
 * With dynamic tasks enabled it re-reads them every `pollingInterval`, and at once when this
 * process changes one.
 */
export class Scheduler extends Poller {
  private readonly entries = new Map<string, Entry>();
  private readonly staticKeys: ReadonlySet<string>;
  private readonly reported = new Map<string, string>();
  private readonly now: () => number;
  private startedAt = 0;
  private nextReload = 0;
  private plannedWake: number | undefined;

  constructor(
    readonly settings: SchedulerSettings,
    private readonly deps: SchedulerDependencies,
  ) {
    super({ logger: deps.logger, what: "scheduler" });
    this.now = deps.now ?? Date.now;
    this.staticKeys = new Set((deps.staticTasks ?? []).map((task) => task.key));
  }

  /** Keys of the tasks this scheduler runs now, in key order. */
  get taskKeys(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** Sync the configuration's tasks into the table and plan their first ticks. Call before `start()`. */
  async prepare(): Promise<void> {
    const { staticTasks, database, logger } = this.deps;
    this.startedAt = this.now();
    if (staticTasks === null) return;
    const changes = await retryTransient(
      (error) => isTaskKeyConflict(database.dialect, error),
      () => database.writeTransaction((trx) => syncStaticRecurringTasks(trx, staticTasks, new Date(this.startedAt))),
    );
    if (changes.added.length + changes.updated.length + changes.deleted.length > 0)
      logger.info("recurring tasks synced from configuration", { ...changes });
    for (const task of staticTasks) this.entries.set(task.key, this.entryFor(task, "", new Date(this.startedAt)));
  }

  /** Re-read dynamic tasks now: this process has just changed one. */
  reloadSoon(): void {
    if (!this.settings.dynamicTasks) return;
    this.nextReload = 0;
    this.wake();
  }

  protected poll(): Promise<number> {
    return this.step(this.now());
  }

  protected onPollError(error: unknown, repeated: boolean): number {
    if (!repeated) this.deps.onError(error);
    return this.plan(RETRY_DELAY_MS);
  }

  /** One pass at time `now` (ms): reload if due, enqueue due ticks, return the sleep until the next. */
  async step(now: number): Promise<number> {
    if (this.settings.dynamicTasks && now >= this.nextReload) {
      await this.reloadDynamicTasks();
      this.nextReload = now + this.settings.pollingInterval;
    }
    const stalled = this.plannedWake !== undefined && now - this.plannedWake > STALL_LIMIT_MS;
    if (stalled) {
      this.deps.logger.warn(
        "scheduler woke late (process suspended or event loop blocked?); ticks missed meanwhile are skipped",
        {
          plannedAt: new Date(this.plannedWake!).toISOString(),
          lateMs: now - this.plannedWake!,
        },
      );
    }
    const failed = new Set<string>();
    let enqueued = 0;
    for (let entry = this.earliestDue(now, failed); entry; entry = this.earliestDue(now, failed)) {
      if (enqueued++ >= MAX_TICKS_PER_POLL) return this.plan(0);
      const tick = entry.next!;
      try {
        await this.enqueueTick(entry, tick);
      } catch (error) {
        failed.add(entry.task.key);
        this.deps.logger.error("recurring task tick failed; retrying", {
          task: entry.task.key,
          runAt: tick.toISOString(),
          error,
        });
        continue;
      }
      entry.next = entry.schedule.next(stalled && tick.getTime() < now ? new Date(now) : tick);
    }
    // A failed tick stays owed (its `next` is past): it is retried after the delay, not in a hot loop.
    const wakes = [...this.entries.values()].flatMap((entry) =>
      entry.next && !failed.has(entry.task.key) ? [entry.next.getTime()] : [],
    );
    if (this.settings.dynamicTasks) wakes.push(this.nextReload);
    if (failed.size > 0) wakes.push(now + RETRY_DELAY_MS);
    if (wakes.length === 0) return this.plan(UNTIL_WOKEN);
    // Timers may fire a hair early: never return 0 for a tick that is not due yet.
    return this.plan(Math.max(1, Math.min(...wakes) - this.now()));
  }

  private plan(delay: number): number {
    this.plannedWake = delay >= UNTIL_WOKEN ? undefined : this.now() + delay;
    return delay;
  }

  private earliestDue(now: number, skip: ReadonlySet<string>): Entry | undefined {
    let earliest: Entry | undefined;
    for (const entry of this.entries.values()) {
      if (!entry.next || entry.next.getTime() > now || skip.has(entry.task.key)) continue;
      if (!earliest || entry.next < earliest.next!) earliest = entry;
    }
    return earliest;
  }

  private async enqueueTick(entry: Entry, tick: Date): Promise<void> {
    const { task } = entry;
    const outcome = await enqueueRecurringTick(
      this.deps.database,
      this.deps.policies,
      task,
      tick,
      this.jobDefaults(task),
      this.deps.enqueue,
    );
    const fields = { task: task.key, job: task.job, runAt: tick.toISOString() };
    if (outcome.kind === "enqueued")
      this.deps.logger.debug("recurring task enqueued", { ...fields, jobId: outcome.jobId });
    else if (outcome.kind === "discarded")
      this.deps.logger.info("recurring task tick discarded by the job's concurrency controls", fields);
    else if (outcome.kind === "removed") {
      // Unscheduled, or dropped by a newer configuration's sync: the table decides what runs.
      this.reportOnce(task.key, "removed", () =>
        this.deps.logger.warn("recurring task is no longer in the database; skipping its ticks", {
          task: task.key,
          static: task.static,
        }),
      );
      if (!task.static) this.entries.delete(task.key);
    }
  }

  private jobDefaults(task: RecurringTask): ResolvedJobOptions {
    const definition = this.deps.registry.get(task.job);
    if (definition) return definition.options;
    // A dynamic task may name a job other processes define: enqueue it with the plain defaults.
    this.reportOnce(task.key, `undefined:${task.job}`, () =>
      this.deps.logger.warn(
        "recurring task names a job not defined in this process; enqueuing it with default queue and priority",
        { task: task.key, job: task.job },
      ),
    );
    return resolveJobOptions(task.job, {});
  }

  private entryFor(task: RecurringTask, signature: string, after: Date): Entry {
    const schedule = scheduleOf(task);
    return { task, schedule, signature, next: schedule.next(after) };
  }

  private async reloadDynamicTasks(): Promise<void> {
    const rows = await listRecurringTaskRows(this.deps.database.db, "dynamic");
    const present = new Set<string>();
    for (const row of rows) {
      if (this.staticKeys.has(row.key)) continue;
      present.add(row.key);
      const signature = signatureOf(row);
      if (this.entries.get(row.key)?.signature === signature) continue;
      try {
        const task = taskFromRow(row);
        // Ticks after the task's last change count, but none from before this scheduler ran.
        const after = new Date(Math.max(toDate(row.updated_at).getTime(), this.startedAt));
        const entry = this.entryFor(task, signature, after);
        this.deps.logger.info(
          this.entries.has(row.key) ? "dynamic recurring task changed" : "dynamic recurring task picked up",
          {
            task: row.key,
            schedule: entry.schedule.toString(),
            next: entry.next?.toISOString(),
          },
        );
        this.entries.set(row.key, entry);
      } catch (error) {
        this.entries.delete(row.key);
        this.reportOnce(row.key, signature, () =>
          this.deps.logger.error("dynamic recurring task is unusable; skipping it", { task: row.key, error }),
        );
      }
    }
    for (const [key, entry] of this.entries) {
      if (entry.task.static || present.has(key)) continue;
      this.entries.delete(key);
      this.deps.logger.info("dynamic recurring task removed", { task: key });
    }
  }

  private reportOnce(key: string, what: string, report: () => void): void {
    if (this.reported.get(key) === what) return;
    this.reported.set(key, what);
    report();
  }
}

function signatureOf(row: RecurringTaskRow): string {
  return JSON.stringify([
    row.schedule,
    row.timezone,
    row.class_name,
    row.arguments,
    row.queue_name,
    row.priority,
    toDate(row.updated_at).getTime(),
  ]);
}
