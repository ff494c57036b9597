import { describe, expect, it } from "vitest";
import { RecurringTaskError } from "../src/index.js";
import { CronSchedule } from "../src/definitions/schedule.js";

/** The ticks of a schedule after `from`, as ISO strings: fixed dates, no waiting. */
function ticks(expression: string, timezone: string | undefined, from: string, count: number): string[] {
  const schedule = new CronSchedule("t", expression, timezone);
  const out: string[] = [];
  let at = new Date(from);
  for (let i = 0; i < count; i++) {
    at = schedule.next(at)!;
    out.push(at.toISOString());
  }
  return out;
}

/** Ticks in [start, end), for counting a whole local day. */
function ticksBetween(expression: string, timezone: string, start: string, end: string): string[] {
  const schedule = new CronSchedule("t", expression, timezone);
  const out: string[] = [];
  for (let at = schedule.next(new Date(new Date(start).getTime() - 1))!; at < new Date(end); at = schedule.next(at)!)
    out.push(at.toISOString());
  return out;
}

describe("cron schedules", () => {
  it("read 5 fields at minute precision and 6 fields with seconds first", () => {
    expect(ticks("* * * * *", undefined, "2024-01-01T00:00:30Z", 2)).toEqual([
      "2024-01-01T00:01:00.000Z",
      "2024-01-01T00:02:00.000Z",
    ]);
    expect(ticks("*/15 * * * * *", undefined, "2024-01-01T00:00:00Z", 3)).toEqual([
      "2024-01-01T00:00:15.000Z",
      "2024-01-01T00:00:30.000Z",
      "2024-01-01T00:00:45.000Z",
    ]);
    expect(ticks("* * * * * *", undefined, "2024-01-01T00:00:00.400Z", 2)).toEqual([
      "2024-01-01T00:00:01.000Z",
      "2024-01-01T00:00:02.000Z",
    ]);
    expect(ticks("0 9 * * MON-FRI", undefined, "2024-01-05T10:00:00Z", 2)).toEqual([
      "2024-01-08T09:00:00.000Z",
      "2024-01-09T09:00:00.000Z",
    ]);
    expect(ticks("@daily", undefined, "2024-01-01T12:00:00Z", 1)).toEqual(["2024-01-02T00:00:00.000Z"]);
  });

  it("are read in UTC unless a time zone is given", () => {
    expect(ticks("0 3 * * *", undefined, "2024-01-15T12:00:00Z", 1)).toEqual(["2024-01-16T03:00:00.000Z"]);
    expect(ticks("0 3 * * *", "UTC", "2024-07-15T12:00:00Z", 1)).toEqual(["2024-07-16T03:00:00.000Z"]);
    // 03:00 in Berlin is 02:00 UTC in winter (CET) and 01:00 UTC in summer (CEST).
    expect(ticks("0 3 * * *", "Europe/Berlin", "2024-01-15T12:00:00Z", 1)).toEqual(["2024-01-16T02:00:00.000Z"]);
    expect(ticks("0 3 * * *", "Europe/Berlin", "2024-07-15T12:00:00Z", 1)).toEqual(["2024-07-16T01:00:00.000Z"]);
    expect(ticks("0 9 * * *", "Asia/Kolkata", "2024-07-15T12:00:00Z", 1)).toEqual(["2024-07-16T03:30:00.000Z"]);
  });

  it("run a fixed daily time once on the spring-forward day, at the end of the gap", () => {
    // Europe/Berlin, 2024-03-31: 02:00 CET jumps to 03:00 CEST, so 02:30 does not exist.
    expect(ticks("30 2 * * *", "Europe/Berlin", "2024-03-30T12:00:00Z", 3)).toEqual([
      "2024-03-31T01:00:00.000Z", // 03:00 CEST, the first valid time after the gap
      "2024-04-01T00:30:00.000Z", // 02:30 CEST
      "2024-04-02T00:30:00.000Z",
    ]);
    // America/New_York, 2024-03-10: 02:00 EST jumps to 03:00 EDT.
    expect(ticks("30 2 * * *", "America/New_York", "2024-03-09T12:00:00Z", 2)).toEqual([
      "2024-03-10T07:00:00.000Z",
      "2024-03-11T06:30:00.000Z",
    ]);
    // A list of fixed times is fixed too (as in Vixie cron): both run that day.
    expect(ticksBetween("30 2,14 * * *", "Europe/Berlin", "2024-03-30T23:00:00Z", "2024-03-31T22:00:00Z")).toEqual([
      "2024-03-31T01:00:00.000Z",
      "2024-03-31T12:30:00.000Z",
    ]);
  });

  it("run a fixed daily time once on the fall-back day, though it occurs twice", () => {
    // Europe/Berlin, 2024-10-27: 03:00 CEST falls back to 02:00 CET, so 02:30 happens twice.
    expect(ticks("30 2 * * *", "Europe/Berlin", "2024-10-26T12:00:00Z", 3)).toEqual([
      "2024-10-27T00:30:00.000Z", // 02:30 CEST, the first occurrence only
      "2024-10-28T01:30:00.000Z", // 02:30 CET
      "2024-10-29T01:30:00.000Z",
    ]);
  });

  it("follow the clock for wildcard hours: 23 hourly ticks on the short day, 25 on the long one", () => {
    const spring = ticksBetween("0 * * * *", "Europe/Berlin", "2024-03-30T23:00:00Z", "2024-03-31T22:00:00Z");
    expect(spring).toHaveLength(23);
    const fall = ticksBetween("0 * * * *", "Europe/Berlin", "2024-10-26T22:00:00Z", "2024-10-27T23:00:00Z");
    expect(fall).toHaveLength(25);
    // Every tick one real hour after the previous: none skipped, none doubled.
    for (const list of [spring, fall]) {
      for (let i = 1; i < list.length; i++) expect(Date.parse(list[i]!) - Date.parse(list[i - 1]!)).toBe(3_600_000);
    }
  });

  it.each([
    ["61 * * * *", "not a valid cron expression"],
    ["* * * *", "not a valid cron expression"],
    ["* * * * * * *", "not a valid cron expression"],
    ["every day", "not a valid cron expression"],
    ["", "must be a cron expression string"],
    ["0 0 30 2 *", "never matches"],
  ])("reject %j naming the task", (expression, problem) => {
    const attempt = () => new CronSchedule("nightly", expression);
    expect(attempt).toThrow(RecurringTaskError);
    expect(attempt).toThrow(`Recurring task "nightly": `);
    expect(attempt).toThrow(problem);
  });

  it("reject a time zone Node.js does not know, and a schedule that is not a string", () => {
    expect(() => new CronSchedule("tz", "0 3 * * *", "Mars/Olympus")).toThrow(
      'Recurring task "tz": timezone "Mars/Olympus" is not a time zone',
    );
    expect(() => new CronSchedule("tz", "0 3 * * *", "")).toThrow("timezone must be an IANA time zone name");
    expect(() => new CronSchedule("n", 5 as never)).toThrow(
      'Recurring task "n": schedule must be a cron expression string',
    );
  });
});
