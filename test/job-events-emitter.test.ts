import { describe, expect, it } from "vitest";
import { ConfigurationError, JOB_EVENT_NAMES, type JobEventName } from "../src/index.js";
import { JobEvents } from "../src/job-events.js";

const EVENT = { jobId: 1, job: "a", queue: "default", attempt: 1, processId: 7 };

describe("JobEvents", () => {
  it("calls listeners in the order added, and on() returns the function that stops one", () => {
    const events = new JobEvents(() => undefined);
    const heard: string[] = [];
    const stopFirst = events.on("job.claimed", (event) => heard.push(`first ${event.jobId}`));
    events.on("job.claimed", (event) => heard.push(`second ${event.jobId}`));
    expect(events.listenerCount("job.claimed")).toBe(2);
    events.emit("job.claimed", EVENT);
    stopFirst();
    stopFirst(); // a second call changes nothing
    events.emit("job.claimed", { ...EVENT, jobId: 2 });
    expect(heard).toEqual(["first 1", "second 1", "second 2"]);
    expect(events.listenerCount("job.claimed")).toBe(1);
  });

  it("says whether an event has listeners, so emitters can skip building payloads", () => {
    const events = new JobEvents(() => undefined);
    expect(events.has("job.started")).toBe(false);
    const stop = events.on("job.started", () => undefined);
    expect(events.has("job.started")).toBe(true);
    expect(events.has("job.finished")).toBe(false);
    stop();
    expect(events.has("job.started")).toBe(false);
  });

  it("a listener removed while an event is being emitted still hears that event, not the next", () => {
    const events = new JobEvents(() => undefined);
    const heard: number[] = [];
    let stopSecond = (): void => undefined;
    events.on("job.claimed", () => stopSecond());
    stopSecond = events.on("job.claimed", (event) => heard.push(event.jobId));
    events.emit("job.claimed", EVENT);
    events.emit("job.claimed", { ...EVENT, jobId: 2 });
    expect(heard).toEqual([1]);
  });

  it("a listener that throws is reported and the others still run; emit never throws", () => {
    const reported: [unknown, JobEventName][] = [];
    const events = new JobEvents((error, name) => reported.push([error, name]));
    const boom = new Error("listener bug");
    let later = 0;
    events.on("job.claimed", () => {
      throw boom;
    });
    events.on("job.claimed", () => later++);
    expect(() => events.emit("job.claimed", EVENT)).not.toThrow();
    expect(later).toBe(1);
    expect(reported).toEqual([[boom, "job.claimed"]]);
  });

  it("a listener's promise is not awaited, and its rejection is reported", async () => {
    const reported: unknown[] = [];
    const events = new JobEvents((error) => reported.push(error));
    let settle = (): void => undefined;
    const slow = new Promise<void>((_, reject) => (settle = () => reject(new Error("late failure"))));
    events.on("job.claimed", () => slow);
    events.emit("job.claimed", EVENT); // returns while the listener's promise is pending
    expect(reported).toEqual([]);
    settle();
    await slow.catch(() => undefined);
    await Promise.resolve();
    expect(reported).toEqual([new Error("late failure")]);
  });

  it("a reporter that throws does not escape emit", () => {
    const events = new JobEvents(() => {
      throw new Error("reporter broke");
    });
    events.on("job.claimed", () => {
      throw new Error("listener broke");
    });
    expect(() => events.emit("job.claimed", EVENT)).not.toThrow();
  });

  it("refuses unknown event names and non-function listeners with a named error", () => {
    const events = new JobEvents(() => undefined);
    expect(() => events.on("job.done" as JobEventName, () => undefined)).toThrow(ConfigurationError);
    expect(() => events.on("job.done" as JobEventName, () => undefined)).toThrow(/Unknown job event "job.done"/);
    expect(() => events.on("job.claimed", "nope" as never)).toThrow(ConfigurationError);
    expect(JOB_EVENT_NAMES.every((name) => events.listenerCount(name) === 0)).toBe(true);
  });
});
