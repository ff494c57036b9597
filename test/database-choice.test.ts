import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigurationError, FirmQueue, MissingDatabaseError, silentLogger, type Logger } from "../src/index.js";
import { redactUrl } from "../src/errors.js";
import { describeEachDatabase } from "./support/harness.js";

describe("which database firm-queue uses", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("defaults to the SQLite file only when nothing at all is configured", () => {
    vi.stubEnv("FIRM_QUEUE_DATABASE_URL", undefined);
    vi.stubEnv("NODE_ENV", "development");
    expect(new FirmQueue({ logger: silentLogger }).options.databaseUrl).toBe("sqlite:firm-queue.sqlite3");
  });

  it("rejects a databaseUrl that was passed but is undefined or blank (an unset environment variable)", () => {
    vi.stubEnv("FIRM_QUEUE_DATABASE_URL", "sqlite:elsewhere.sqlite3");
    expect(() => new FirmQueue({ databaseUrl: undefined })).toThrow(ConfigurationError);
    expect(() => new FirmQueue({ databaseUrl: undefined })).toThrow(/databaseUrl was given but is undefined/);
    expect(() => new FirmQueue({ databaseUrl: "  " })).toThrow(/databaseUrl was given but is "  "/);
  });

  it("rejects an empty FIRM_QUEUE_DATABASE_URL", () => {
    vi.stubEnv("FIRM_QUEUE_DATABASE_URL", "");
    expect(() => new FirmQueue()).toThrow(/FIRM_QUEUE_DATABASE_URL was given but is ""/);
  });

  it("refuses the development default under NODE_ENV=production", () => {
    vi.stubEnv("FIRM_QUEUE_DATABASE_URL", undefined);
    vi.stubEnv("NODE_ENV", "production");
    expect(() => new FirmQueue()).toThrow(MissingDatabaseError);
    vi.stubEnv("FIRM_QUEUE_DATABASE_URL", "postgres://app@db.internal/app");
    expect(new FirmQueue().options.databaseUrl).toBe("postgres://app@db.internal/app");
  });

  it("takes either databaseUrl or a database handle, not both", () => {
    const handle = { connect: async () => undefined, end: async () => undefined, totalCount: 0, idleCount: 0 };
    expect(() => new FirmQueue({ databaseUrl: "sqlite::memory:", database: handle })).toThrow(
      /either databaseUrl or database/,
    );
    expect(() => new FirmQueue({ database: {} as never })).toThrow(/database must be a pg.Pool/);
  });

  it("hides passwords in the URL's user part and in its query", () => {
    const shown = redactUrl("postgres://app:s3cret@db/app?sslmode=require&password=other");
    expect(shown).not.toContain("s3cret");
    expect(shown).not.toContain("other");
    expect(shown).toBe("postgres://app:***@db/app?sslmode=require&password=***");
  });
});

describeEachDatabase("start", (env) => {
  it("logs which database it uses", async () => {
    const lines: Array<[string, Record<string, unknown> | undefined]> = [];
    const logger: Logger = { ...silentLogger, info: (message, fields) => void lines.push([message, fields]) };
    const firm = env.firm({ logger });
    firm.defineJob("nothing", async () => undefined);
    const supervisor = await firm.start();
    await supervisor.stop();
    expect(lines).toContainEqual(["using database", { database: redactUrl(env.url) }]);
  });
});
