import { toTimerMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import { rejectUnknownKeys } from "../option-checks.js";
import type { SchedulerSettings } from "../roles/scheduler.js";
import { shown } from "../shown-value.js";

/** The scheduler in `firm.start({ scheduler })`. */
export interface SchedulerOptions {
  /** Also run tasks added with `firm.recurring.schedule()`. Default false. */
  readonly dynamicTasks?: boolean | undefined;
  /** How often dynamic tasks are re-read from the database. Default 5 s. */
  readonly pollingInterval?: Duration | undefined;
}

const SCHEDULER_KEYS = new Set(["dynamicTasks", "pollingInterval"]);

/**
 * The scheduler's settings, or null when this start runs none. A scheduler runs when the start
 * options declare `recurring` tasks (even none: then it removes the static tasks that are gone)
 * or configure a `scheduler`.
 */
export function resolveSchedulerOptions(
  options: SchedulerOptions | undefined,
  declaresRecurring: boolean,
): SchedulerSettings | null {
  if (options === undefined && !declaresRecurring) return null;
  const scheduler = options ?? {};
  rejectUnknownKeys(scheduler, SCHEDULER_KEYS, "scheduler option");
  const dynamicTasks = scheduler.dynamicTasks ?? false;
  if (typeof dynamicTasks !== "boolean")
    throw new ConfigurationError(`scheduler.dynamicTasks must be true or false, got ${shown(dynamicTasks)}`);
  const pollingInterval = toTimerMilliseconds(scheduler.pollingInterval ?? 5000, "scheduler.pollingInterval");
  if (pollingInterval <= 0) throw new ConfigurationError("scheduler.pollingInterval must be more than 0");
  return Object.freeze({ dynamicTasks, pollingInterval });
}
