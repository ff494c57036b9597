import { describe, expect, it } from "vitest";
import { ConfigurationError, RecurringTaskError } from "../src/index.js";
import { resolveStartOptions } from "../src/facade/options.js";
import { resolveRecurringTasks } from "../src/definitions/recurring-task.js";

const JOBS = ["build-report", "cleanup"];

describe("recurring task configuration", () => {
  it("resolves tasks in key order with defaults, serializing arguments", () => {
    const tasks = resolveRecurringTasks(
      {
        "nightly-report": {
          job: "build-report",
          args: { kind: "daily", since: new Date("2024-01-01T00:00:00Z") },
          schedule: " 0 3 * * * ",
          timezone: "Europe/Berlin",
          queue: "reports",
          priority: 4,
          description: "The daily report",
        },
        cleanup: { job: "cleanup", schedule: "*/10 * * * * *" },
      },
      JOBS,
    );
    expect(tasks.map((task) => task.key)).toEqual(["cleanup", "nightly-report"]);
    expect(tasks[0]).toEqual({
      key: "cleanup",
      job: "cleanup",
      arguments: "null",
      schedule: "*/10 * * * * *",
      timezone: "UTC",
      queue: null,
      priority: null,
      description: null,
      static: true,
    });
    expect(tasks[1]).toMatchObject({
      schedule: "0 3 * * *",
      timezone: "Europe/Berlin",
      queue: "reports",
      priority: 4,
      description: "The daily report",
    });
    expect(JSON.parse(tasks[1]!.arguments)).toEqual({
      kind: "daily",
      since: { $firm: "date", v: "2024-01-01T00:00:00.000Z" },
    });
    expect(resolveRecurringTasks(undefined, JOBS)).toEqual([]);
    expect(resolveRecurringTasks({}, JOBS)).toEqual([]);
  });

  it.each([
    [{ job: "build-report", schedule: "0 3 * * *", every: "day" }, 'unknown key "every"'],
    [
      { job: "build-reports", schedule: "0 3 * * *" },
      'job "build-reports" is not defined (defined jobs: build-report, cleanup)',
    ],
    [{ schedule: "0 3 * * *" }, "job must name a defined job"],
    [{ job: "build-report", schedule: "0 3 * *" }, "is not a valid cron expression"],
    [{ job: "build-report" }, "schedule must be a cron expression string"],
    [{ job: "build-report", schedule: "0 3 * * *", timezone: "Berlin" }, 'timezone "Berlin" is not a time zone'],
    [{ job: "build-report", schedule: "0 3 * * *", queue: "a b" }, "queue must be a queue name"],
    [{ job: "build-report", schedule: "0 3 * * *", priority: "high" }, "priority must be an integer"],
    [{ job: "build-report", schedule: "0 3 * * *", args: { when: () => 1 } }, "arguments.when is a function"],
    [{ job: "build-report", schedule: "0 3 * * *", description: 7 }, "description must be a string"],
    ["0 3 * * *", "must be an object like { job, schedule }"],
  ])("rejects a bad task with a RecurringTaskError naming it (%j)", (task, problem) => {
    const attempt = () =>
      resolveRecurringTasks({ good: { job: "cleanup", schedule: "@hourly" }, "nightly-report": task }, JOBS);
    expect(attempt).toThrow(RecurringTaskError);
    expect(attempt).toThrow(`Recurring task "nightly-report": `);
    expect(attempt).toThrow(problem);
    try {
      attempt();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as RecurringTaskError).taskKey).toBe("nightly-report");
    }
  });

  it("rejects a section that is not an object of tasks, and an empty key", () => {
    expect(() => resolveRecurringTasks([{ job: "cleanup", schedule: "@hourly" }], JOBS)).toThrow(
      "recurring must be an object of task key → task, got an array",
    );
    expect(() => resolveRecurringTasks("nope", JOBS)).toThrow(ConfigurationError);
    expect(() => resolveRecurringTasks({ " ": { job: "cleanup", schedule: "@hourly" } }, JOBS)).toThrow(
      "a task key must be a non-empty string",
    );
  });

  it("start options run a scheduler only when recurring tasks or scheduler options are given", () => {
    expect(resolveStartOptions({}).scheduler).toBeNull();
    expect(resolveStartOptions({ recurring: {} }).scheduler).toEqual({ dynamicTasks: false, pollingInterval: 5000 });
    expect(resolveStartOptions({ scheduler: { dynamicTasks: true, pollingInterval: "2s" } }).scheduler).toEqual({
      dynamicTasks: true,
      pollingInterval: 2000,
    });
    expect(() => resolveStartOptions({ scheduler: { dynamic: true } as never })).toThrow(
      'Unknown scheduler option "dynamic"',
    );
    expect(() => resolveStartOptions({ scheduler: { dynamicTasks: "yes" as never } })).toThrow(
      "scheduler.dynamicTasks must be true or false",
    );
    expect(() => resolveStartOptions({ scheduler: { pollingInterval: 0 } })).toThrow(
      "scheduler.pollingInterval must be more than 0",
    );
  });
});
