import { Cron } from "croner";
import { RecurringTaskError } from "../errors.js";
import { shown } from "../shown-value.js";

/** The time zone a schedule is read in when none is given. */
export const DEFAULT_TIMEZONE = "UTC";

/**
 * A cron expression read in an IANA time zone: 5 fields (minute precision) or 6 with a leading
 * seconds field, or a nickname such as `@daily`. Parsing and tick arithmetic are croner's.
 *
 * Daylight-saving changes follow Vixie cron: a time of day written without `*` or a step
 * (`30 2 * * *`, `0 2,14 * * *`) runs once on the day its local time is skipped (at the first
 * valid time after the gap) and once on the day it occurs twice; an expression with a wildcard
 * or step in its time fields (`0 * * * *`) follows the clock: skipped local times do not run and
 * repeated ones run twice.
 */
export class CronSchedule {
  private readonly cron: Cron;

  /** Throws {@link RecurringTaskError} naming `taskKey` when the expression or zone is unusable. */
  constructor(
    readonly taskKey: string,
    readonly expression: string,
    readonly timezone: string = DEFAULT_TIMEZONE,
  ) {
    if (typeof expression !== "string" || expression.trim() === "") {
      throw new RecurringTaskError(taskKey, `schedule must be a cron expression string, got ${shown(expression)}`);
    }
    checkTimezone(taskKey, timezone);
    try {
      this.cron = new Cron(expression.trim(), {
        timezone,
        mode: "5-or-6-parts",
        fixedTimeRule: "no-wildcard",
        paused: true,
      });
    } catch (error) {
      throw new RecurringTaskError(
        taskKey,
        `schedule ${shown(expression)} is not a valid cron expression (5 fields, or 6 with seconds first): ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (this.next(new Date()) === null) {
      throw new RecurringTaskError(taskKey, `schedule ${shown(expression)} never matches a date in the future`);
    }
  }

  /** The first tick strictly after `after`, or null when there is none. */
  next(after: Date): Date | null {
    return this.cron.nextRun(after);
  }

  /** The schedule as shown to people: the expression, with its zone when that is not UTC. */
  toString(): string {
    return this.timezone === DEFAULT_TIMEZONE ? this.expression : `${this.expression} (${this.timezone})`;
  }
}

function checkTimezone(taskKey: string, timezone: unknown): void {
  if (typeof timezone !== "string" || timezone === "") {
    throw new RecurringTaskError(
      taskKey,
      `timezone must be an IANA time zone name such as "Europe/Berlin", got ${shown(timezone)}`,
    );
  }
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch (error) {
    throw new RecurringTaskError(
      taskKey,
      `timezone ${shown(timezone)} is not a time zone this Node.js knows (use an IANA name such as "Europe/Berlin")`,
      { cause: error },
    );
  }
}
