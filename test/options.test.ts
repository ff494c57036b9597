import { describe, expect, it } from "vitest";
import { ConfigurationError, DatabaseUrlError, FirmQueue, silentLogger } from "../src/index.js";
import { parseDatabaseUrl } from "../src/database/url.js";
import { toMilliseconds } from "../src/duration.js";
import { resolveStartOptions } from "../src/facade/options.js";

describe("database URLs", () => {
  it("accepts the three databases", () => {
    expect(parseDatabaseUrl("sqlite:jobs.sqlite3")).toMatchObject({ dialect: "sqlite", filename: "jobs.sqlite3" });
    expect(parseDatabaseUrl("sqlite:///var/db/jobs.sqlite3")).toMatchObject({
      dialect: "sqlite",
      filename: "/var/db/jobs.sqlite3",
    });
    expect(parseDatabaseUrl("sqlite::memory:")).toMatchObject({ dialect: "sqlite", filename: ":memory:" });
    expect(parseDatabaseUrl("postgres://u:p@db:5432/app").dialect).toBe("postgres");
    expect(parseDatabaseUrl("postgresql://db/app").dialect).toBe("postgres");
    expect(parseDatabaseUrl("mysql://root@db:3306/app").dialect).toBe("mysql");
    expect(parseDatabaseUrl("mariadb://root@db/app").dialect).toBe("mysql");
  });

  it.each([
    ["", "it is empty"],
    ["jobs.sqlite3", "it has no scheme"],
    ["redis://localhost", 'unsupported scheme "redis:"'],
    ["sqlite:", "no file name"],
    ["postgres://", "it names no host"],
  ])("rejects %j: %s", (url, reason) => {
    expect(() => parseDatabaseUrl(url)).toThrow(DatabaseUrlError);
    expect(() => parseDatabaseUrl(url)).toThrow(reason);
  });

  it("hides passwords in error messages", () => {
    expect(() => parseDatabaseUrl("redis://user:secret@host")).toThrow("redis://user:***@host");
  });
});

describe("durations", () => {
  it("reads milliseconds and unit strings", () => {
    expect(toMilliseconds(250, "x")).toBe(250);
    expect(toMilliseconds("250ms", "x")).toBe(250);
    expect(toMilliseconds("5s", "x")).toBe(5000);
    expect(toMilliseconds("1.5m", "x")).toBe(90_000);
    expect(toMilliseconds("1h", "x")).toBe(3_600_000);
    expect(toMilliseconds("2d", "x")).toBe(172_800_000);
  });

  it.each([-1, Number.NaN, "5 minutes", "m", "", "-5s"])("rejects %j naming the option", (value) => {
    expect(() => toMilliseconds(value as number, "wait")).toThrow(/^wait must be/);
  });
});

describe("options", () => {
  it("reads clearFinishedJobsAfter: default 1 day, a duration, or false for never", () => {
    const make = (clearFinishedJobsAfter?: unknown) =>
      new FirmQueue({
        databaseUrl: "sqlite::memory:",
        logger: silentLogger,
        ...(clearFinishedJobsAfter === undefined ? {} : { clearFinishedJobsAfter }),
      } as never);
    expect(make().options.clearFinishedJobsAfter).toBe(86_400_000);
    expect(make("2h").options.clearFinishedJobsAfter).toBe(7_200_000);
    expect(make(false).options.clearFinishedJobsAfter).toBeNull();
    expect(() => make(true)).toThrow("clearFinishedJobsAfter must be");
    expect(() => make("a week")).toThrow("clearFinishedJobsAfter must be");
  });

  it("rejects unknown FirmQueue options by name", () => {
    expect(() => new FirmQueue({ databaseURL: "sqlite:x" } as never)).toThrow('Unknown FirmQueue option "databaseURL"');
  });

  it("defaults the database URL to the environment, then a local SQLite file", () => {
    const saved = process.env.FIRM_QUEUE_DATABASE_URL;
    try {
      delete process.env.FIRM_QUEUE_DATABASE_URL;
      expect(new FirmQueue({ logger: silentLogger }).options.databaseUrl).toBe("sqlite:firm-queue.sqlite3");
      process.env.FIRM_QUEUE_DATABASE_URL = "postgres://db/app";
      expect(new FirmQueue({ logger: silentLogger }).options.databaseUrl).toBe("postgres://db/app");
    } finally {
      if (saved === undefined) delete process.env.FIRM_QUEUE_DATABASE_URL;
      else process.env.FIRM_QUEUE_DATABASE_URL = saved;
    }
  });

  it("rejects bad job definitions when they are defined", () => {
    const firm = new FirmQueue({ databaseUrl: "sqlite::memory:", logger: silentLogger });
    expect(() => firm.defineJob("", async () => {})).toThrow(ConfigurationError);
    expect(() => firm.defineJob("a", async () => {}, { queue: "has space" })).toThrow("queue must be a queue name");
    expect(() => firm.defineJob("a", async () => {}, { priority: 1.5 })).toThrow("priority must be an integer");
    expect(() => firm.defineJob("a", async () => {}, { retries: 3 } as never)).toThrow(
      'Unknown defineJob("a") option "retries"',
    );
    firm.defineJob("a", async () => {});
    expect(() => firm.defineJob("a", async () => {})).toThrow('A job named "a" is already defined');
  });

  it("checks start options and fills defaults", () => {
    const resolved = resolveStartOptions({});
    expect(resolved.workers).toEqual([
      { queues: "*", concurrency: 3, pollingInterval: 100, processes: 1, execArgv: [] },
    ]);
    expect(resolved.dispatchers).toEqual([
      {
        pollingInterval: 1000,
        batchSize: 500,
        clearFinishedJobsInterval: 300_000,
        clearFinishedJobsBatchSize: 500,
        concurrencyMaintenanceInterval: 600_000,
      },
    ]);
    expect(resolved.shutdownTimeout).toBe(5000);
    expect(resolved.mode).toBe("async");
    expect(resolved.processHeartbeatInterval).toBe(60_000);
    expect(resolved.processAliveThreshold).toBe(300_000);
    expect(resolveStartOptions({ mode: "fork", require: ["./jobs.js"] })).toMatchObject({
      mode: "fork",
      require: ["./jobs.js"],
    });
    expect(() => resolveStartOptions({ mode: "threads" as never })).toThrow('mode must be "fork" or "async"');
    expect(() => resolveStartOptions({ workers: [{ processes: 0 }] })).toThrow(
      "workers[0].processes must be a whole number",
    );
    expect(() => resolveStartOptions({ require: [] })).toThrow("require must be a non-empty list");
    expect(() => resolveStartOptions({ processHeartbeatInterval: "1m", processAliveThreshold: "30s" })).toThrow(
      "processAliveThreshold (30000 ms) must be longer than processHeartbeatInterval (60000 ms)",
    );
    expect(() => resolveStartOptions({ workers: {} as never })).toThrow("workers must be a list");
    expect(() => resolveStartOptions({ workers: [{ concurrency: 0 }] })).toThrow(
      "workers[0].concurrency must be a whole number",
    );
    expect(() => resolveStartOptions({ workers: [{ queue: "x" } as never] })).toThrow(
      'Unknown workers[0] option "queue"',
    );
    expect(() => resolveStartOptions({ workers: [{ queues: [] }] })).toThrow("queues must name at least one queue");
    expect(() => resolveStartOptions({ dispatchers: [{ pollingInterval: "soon" as never }] })).toThrow(
      "dispatchers[0].pollingInterval must be",
    );
    expect(() => resolveStartOptions({ dispatchers: [{ clearFinishedJobsInterval: 0 }] })).toThrow(
      "dispatchers[0].clearFinishedJobsInterval must be more than 0",
    );
    expect(() => resolveStartOptions({ dispatchers: [{ clearFinishedJobsBatchSize: -1 }] })).toThrow(
      "dispatchers[0].clearFinishedJobsBatchSize must be a whole number",
    );
  });
});
