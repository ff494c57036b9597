import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigurationError, consoleLogger, FirmQueue, type Logger } from "../src/index.js";
import { adaptLogger, bindLogger, isObjectFirst } from "../src/logger-adapter.js";
import { describeEachDatabase } from "./support/harness.js";

/** A pino logger writing JSON lines into `lines`. */
function pinoInto(lines: Record<string, unknown>[]) {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return pino({ level: "debug" }, sink);
}

/** A `(message, fields)` logger that keeps what it is given. */
function capture(): Logger & { lines: { level: string; message: string; fields?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, ...(fields ? { fields } : {}) });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** What `consoleLogger` writes to stderr while `write` runs. */
function stderrOf(write: () => void): string {
  let out = "";
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  try {
    write();
  } finally {
    spy.mockRestore();
  }
  return out;
}

describe("loggers", () => {
  afterEach(() => vi.restoreAllMocks());

  it("a pino logger is recognized and called (fields, message), the error under err with its stack", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pinoInto(lines);
    expect(isObjectFirst(logger)).toBe(true);
    const adapted = adaptLogger(logger);
    adapted.warn("job attempt failed", { jobId: 7, error: new TypeError("bad input") });
    adapted.info("no fields");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines[0]).toMatchObject({ level: 40, msg: "job attempt failed", jobId: 7 });
    expect(lines[0]!.err).toMatchObject({
      type: "TypeError",
      message: "bad input",
      stack: expect.stringContaining("TypeError"),
    });
    expect(lines[1]).toMatchObject({ level: 30, msg: "no fields" });
  });

  it("a bunyan-shaped logger (child() and a level() function) is called (fields, message)", () => {
    const calls: unknown[][] = [];
    const bunyanLike = {
      child: () => bunyanLike,
      level: () => 30,
      debug: (...args: unknown[]) => void calls.push(["debug", ...args]),
      info: (...args: unknown[]) => void calls.push(["info", ...args]),
      warn: (...args: unknown[]) => void calls.push(["warn", ...args]),
      error: (...args: unknown[]) => void calls.push(["error", ...args]),
    };
    adaptLogger(bunyanLike).error("boom", { jobId: 1 });
    expect(calls).toEqual([["error", { jobId: 1 }, "boom"]]);
  });

  it("a (message, fields) logger and console are used as they are", () => {
    const mine = capture();
    expect(adaptLogger(mine)).toBe(mine);
    expect(isObjectFirst(console)).toBe(false);
  });

  it("refuses a logger without the four level methods", () => {
    expect(() => adaptLogger({ info() {} })).toThrow(ConfigurationError);
    expect(() => new FirmQueue({ databaseUrl: "sqlite::memory:", logger: { info() {} } as never })).toThrow(
      /logger must have debug, info, warn and error methods/,
    );
  });

  it("a bound logger adds its fields to every line, the line's own fields winning", () => {
    const target = capture();
    const bound = bindLogger(target, { jobId: 3, job: "mail" });
    const { info } = bound; // usable detached
    info("sent");
    bound.error("failed", { job: "other", error: "x" });
    expect(target.lines).toEqual([
      { level: "info", message: "sent", fields: { jobId: 3, job: "mail" } },
      { level: "error", message: "failed", fields: { jobId: 3, job: "other", error: "x" } },
    ]);
  });

  it("consoleLogger writes one JSON object per line with format json, errors with name, message and stack", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const out = stderrOf(() => {
      const logger = consoleLogger("info", "json");
      logger.debug("hidden");
      logger.warn("job attempt failed", {
        jobId: 5,
        error: new RangeError("too far"),
        big: 10n,
        cyclic,
        skipped: undefined,
      });
    });
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: "warn", pid: process.pid, msg: "job attempt failed", jobId: 5, big: "10" });
    expect(line.error).toMatchObject({
      name: "RangeError",
      message: "too far",
      stack: expect.stringContaining("too far"),
    });
    expect(typeof line.cyclic).toBe("string");
    expect("skipped" in line).toBe(false);
    expect(Number.isNaN(Date.parse(line.time))).toBe(false);
  });

  it("logFormat and FIRM_QUEUE_LOG_FORMAT choose the default logger's format; a bad value is refused", () => {
    const json = stderrOf(() =>
      new FirmQueue({ databaseUrl: "sqlite::memory:", logFormat: "json" }).options.logger.info("hello"),
    );
    expect(JSON.parse(json)).toMatchObject({ msg: "hello", level: "info" });
    vi.stubEnv("FIRM_QUEUE_LOG_FORMAT", "json");
    const fromEnv = stderrOf(() => new FirmQueue({ databaseUrl: "sqlite::memory:" }).options.logger.info("hi"));
    expect(JSON.parse(fromEnv)).toMatchObject({ msg: "hi" });
    vi.unstubAllEnvs();
    const text = stderrOf(() => new FirmQueue({ databaseUrl: "sqlite::memory:" }).options.logger.info("plain"));
    expect(text).toMatch(/ INFO {2}firm-queue\[\d+\] plain\n$/);
    expect(() => new FirmQueue({ databaseUrl: "sqlite::memory:", logFormat: "xml" as never })).toThrow(
      /logFormat must be "text" or "json", got "xml"/,
    );
  });
});

describeEachDatabase("job logs", (env) => {
  it("ctx.logger is bound to the job: id, name, queue and attempt on every line", async () => {
    const lines: Record<string, unknown>[] = [];
    const firm = env.firm({ logger: pinoInto(lines) });
    const job = firm.defineJob(
      "report",
      async (_args: null, context) => {
        context.logger.info("building", { rows: 12 });
        if (context.attempt === 1) throw new Error("first try fails");
      },
      { queue: "reports", retry: { attempts: 2, backoff: 0 } },
    );
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    await new Promise((resolve) => setImmediate(resolve));
    const building = lines.filter((line) => line.msg === "building");
    expect(building).toEqual([
      expect.objectContaining({ jobId: id, job: "report", queue: "reports", attempt: 1, rows: 12 }),
      expect.objectContaining({ jobId: id, job: "report", queue: "reports", attempt: 2, rows: 12 }),
    ]);
    // The retry is logged whatever logJobOutcomes says, with the error under err.
    const retry = lines.find((line) => line.msg === "job attempt failed; retry scheduled");
    expect(retry).toMatchObject({ level: 40, jobId: id, err: { message: "first try fails" } });
  });

  it("logJobOutcomes adds one info line per finished job, and it is the only one; off by default", async () => {
    const quiet = capture();
    const off = env.firm({ logger: quiet });
    off.defineJob("tick", async () => undefined);
    await off.enqueue("tick", null);
    await off.drain();
    // The capture keeps every level, debug included: nothing says "job finished" by default.
    expect(quiet.lines.filter((line) => line.message === "job finished")).toEqual([]);

    const loud = capture();
    const on = env.firm({ logger: loud, logJobOutcomes: true });
    on.defineJob("tick", async () => undefined);
    const id = (await on.enqueue("tick", null)).id;
    await on.drain();
    // One line per finished job at any level, not a debug line beside the info one.
    const finished = loud.lines.filter((line) => line.message === "job finished");
    expect(finished).toEqual([
      {
        level: "info",
        message: "job finished",
        fields: expect.objectContaining({
          jobId: id,
          job: "tick",
          queue: "default",
          attempt: 1,
          durationMs: expect.any(Number),
          waitMs: expect.any(Number),
        }),
      },
    ]);
  });
});
