import { ConfigurationError, FirmQueueError, RecurringTaskError } from "../errors.js";
import { checkPriority, checkQueueName, isStorableText } from "../option-checks.js";
import { serializeArguments } from "../serialization.js";
import { CronSchedule, DEFAULT_TIMEZONE } from "./schedule.js";
import { shown } from "../shown-value.js";

/** One recurring task as declared in `recurring: { … }` or given to `firm.recurring.schedule()`. */
export interface RecurringTaskOptions {
  /** Name of the job to enqueue on every tick (defined with `defineJob`). */
  readonly job: string;
  /** Arguments of every enqueued job. Default null. */
  readonly args?: unknown | undefined;
  /** Cron expression: 5 fields, or 6 with seconds first (`"*\/10 * * * * *"`), or `@daily` and the like. */
  readonly schedule: string;
  /** IANA time zone the schedule is read in. Default `"UTC"`. */
  readonly timezone?: string | undefined;
  /** Queue of the enqueued jobs. Default: the job definition's queue. */
  readonly queue?: string | undefined;
  /** Priority of the enqueued jobs (smaller runs first). Default: the job definition's priority. */
  readonly priority?: number | undefined;
  /** Free text shown by `firm-queue recurring`. */
  readonly description?: string | undefined;
}

/** The `recurring` section: task key → task. */
export type RecurringTasksOptions = Readonly<Record<string, RecurringTaskOptions>>;

/** A recurring task checked and ready to run; `arguments` is already serialized. */
export interface RecurringTask {
  readonly key: string;
  readonly job: string;
  /** JSON text written by `serializeArguments`. */
  readonly arguments: string;
  readonly schedule: string;
  readonly timezone: string;
  /** Null: use the job definition's queue. */
  readonly queue: string | null;
  /** Null: use the job definition's priority. */
  readonly priority: number | null;
  readonly description: string | null;
  /** True when declared in configuration, false when scheduled at run time. */
  readonly static: boolean;
}

const TASK_KEYS = new Set(["job", "args", "schedule", "timezone", "queue", "priority", "description"]);
const MAX_KEY_LENGTH = 255;

/**
 * Check a `recurring` section and return its tasks in key order. `jobNames` are the jobs
 * defined in this process: a task must name one of them. Every problem is a
 * {@link RecurringTaskError} naming the task: an unknown key, a bad cron expression or time zone,
 * an unknown job, a bad queue, priority or argument. Meant for `firm.start()`, config loaders and
 * `firm-queue check` alike; it touches no database.
 */
export function resolveRecurringTasks(input: unknown, jobNames: readonly string[]): RecurringTask[] {
  if (input === undefined || input === null) return [];
  if (typeof input !== "object" || Array.isArray(input)) {
    throw new ConfigurationError(
      `recurring must be an object of task key → task, got ${Array.isArray(input) ? "an array" : typeof input}`,
    );
  }
  return Object.keys(input)
    .sort()
    .map((key) => resolveRecurringTask(key, (input as Record<string, unknown>)[key], jobNames, true));
}

/**
 * Check one task. With `jobNames`, its job must be one of them; pass null to skip that check
 * (a task read back from the database, whose job another process may define).
 */
export function resolveRecurringTask(
  key: string,
  input: unknown,
  jobNames: readonly string[] | null,
  isStatic: boolean,
): RecurringTask {
  checkTaskKey(key);
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new RecurringTaskError(key, `must be an object like { job, schedule }, got ${shown(input)}`);
  }
  for (const name of Object.keys(input)) {
    if (!TASK_KEYS.has(name))
      throw new RecurringTaskError(key, `unknown key "${name}" (known: ${[...TASK_KEYS].join(", ")})`);
  }
  const task = input as RecurringTaskOptions;
  if (typeof task.job !== "string" || task.job === "")
    throw new RecurringTaskError(key, `job must name a defined job, got ${shown(task.job)}`);
  if (jobNames && !jobNames.includes(task.job)) {
    const known = jobNames.length > 0 ? `defined jobs: ${jobNames.join(", ")}` : "no jobs are defined";
    throw new RecurringTaskError(key, `job "${task.job}" is not defined (${known})`);
  }
  const timezone = task.timezone ?? DEFAULT_TIMEZONE;
  new CronSchedule(key, task.schedule, timezone); // throws when the expression or zone is unusable
  if (task.description !== undefined && (typeof task.description !== "string" || !isStorableText(task.description))) {
    throw new RecurringTaskError(
      key,
      `description must be a string without NUL characters or unpaired surrogates, got ${shown(task.description)}`,
    );
  }
  return Object.freeze({
    key,
    job: task.job,
    arguments: serialize(key, task.job, task.args ?? null),
    schedule: task.schedule.trim(),
    timezone,
    queue: task.queue === undefined ? null : rewrap(key, () => checkQueueName(task.queue, "queue")),
    priority: task.priority === undefined ? null : rewrap(key, () => checkPriority(task.priority, "priority")),
    description: task.description ?? null,
    static: isStatic,
  });
}

/** The parsed schedule of a checked task. */
export function scheduleOf(task: RecurringTask): CronSchedule {
  return new CronSchedule(task.key, task.schedule, task.timezone);
}

function checkTaskKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || key.trim() === "" || key.length > MAX_KEY_LENGTH || !isStorableText(key)) {
    throw new RecurringTaskError(
      typeof key === "string" ? key : shown(key),
      `a task key must be a non-empty string of at most ${MAX_KEY_LENGTH} characters, without NUL characters or unpaired surrogates`,
    );
  }
}

function serialize(key: string, job: string, args: unknown): string {
  return rewrap(key, () => serializeArguments(job, args));
}

/** Run a check written for other options and put the task's key in front of its message. */
function rewrap<T>(key: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof FirmQueueError) throw new RecurringTaskError(key, error.message, { cause: error });
    throw error;
  }
}
