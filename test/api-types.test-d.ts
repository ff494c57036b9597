import { describe, expectTypeOf, it } from "vitest";
import {
  type Duration,
  type DurationString,
  type EnqueueOptions,
  FirmQueue,
  isDuration,
  type JobEnqueueOptions,
} from "../src/index.js";

// Type-only: checked by vitest's typecheck (see vitest.config.ts), never run.
const firm = new FirmQueue({ databaseUrl: "sqlite::memory:" });

describe("enqueue options", () => {
  it("a key may be a string or a number", () => {
    expectTypeOf<JobEnqueueOptions["key"]>().toEqualTypeOf<string | number | undefined>();
    const job = firm.declareJob<{ day: string }>("report");
    void job.enqueue({ day: "2026-12-01" }, { key: 20261201 });
    void job.enqueueAll([{ day: "2026-12-01" }], { each: [{ key: 1 }] });
    const options: EnqueueOptions = { key: 7 };
    void options;
    // @ts-expect-error a key is no boolean
    void job.enqueue({ day: "2026-12-01" }, { key: true });
  });
});

describe("durations", () => {
  it("a duration is milliseconds or a number with a unit, checked at compile time", () => {
    const job = firm.declareJob<{ day: string }>("digest", {
      timeout: "30s",
      retry: { attempts: 3, backoff: "1.5m", maxDelay: "1h" },
      unique: { key: "digest", mode: "finished", period: "1h" },
    });
    void job.enqueue({ day: "d" }, { wait: "5m" });
    void job.enqueue({ day: "d" }, { wait: 250 });
    void job.enqueue({ day: "d" }, { wait: "2 d" });
    // @ts-expect-error "minutes" is no unit
    void job.enqueue({ day: "d" }, { wait: "5 minutes" });
    // @ts-expect-error a negative duration
    void job.enqueue({ day: "d" }, { wait: "-1s" });
    // @ts-expect-error a unit is needed
    void job.enqueue({ day: "d" }, { wait: "500" });
    // @ts-expect-error no such backoff
    firm.declareJob("expo", { retry: { backoff: "expo" } });
    firm.declareJob("poly", { retry: { backoff: "polynomial" } });
    firm.declareJob("fixed", { retry: { backoff: "30s" } });
    // @ts-expect-error "1 hour" is no duration
    firm.declareJob("hourly", { unique: { key: "k", mode: "finished", period: "1 hour" } });
    expectTypeOf<"5s">().toExtend<DurationString>();
    expectTypeOf<"5 minutes">().not.toExtend<Duration>();
    expectTypeOf<string>().not.toExtend<Duration>();
  });

  it("a string known only at run time is checked with isDuration", () => {
    const fromEnvironment: string = "5s";
    // @ts-expect-error any string is not a duration
    void firm.declareJob("unchecked", { timeout: fromEnvironment });
    if (isDuration(fromEnvironment)) void firm.declareJob("checked", { timeout: fromEnvironment });
  });
});
