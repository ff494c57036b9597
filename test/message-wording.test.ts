import { describe, expect, it } from "vitest";
import { FirmQueue, type Logger, silentLogger } from "../src/index.js";
import { MIGRATIONS } from "../src/database/migrations/index.js";
import { describeEachDatabase } from "./support/harness.js";

/** The message a call fails with (synchronously or as a rejection). */
async function messageOf(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected the call to fail");
}

/** A word written twice, next to each other or with one word between ("option each[0] option"). */
const DOUBLED = /\b(\w+)\s+(?:\S+\s+)?\1\b/i;

describe("error messages read cleanly", () => {
  it("no message of a bad call repeats a word or starts with an internal name", async () => {
    const firm = new FirmQueue({ databaseUrl: "sqlite::memory:", logger: silentLogger });
    const job = firm.defineJob("wording", async () => {});
    const messages = [
      await messageOf(() => job.enqueueAll([null], { each: [{ delay: 5 } as never] })),
      await messageOf(() => job.enqueueAll([null], { each: [{ queue: "a b" }] })),
      await messageOf(() => job.enqueueAll([null], { each: [{ priority: 1.5 }] })),
      await messageOf(() => job.enqueue(null, { delay: 5 } as never)),
      await messageOf(() => job.enqueue(null, { wait: "soon" as never })),
      await messageOf(() => firm.defineJob("bad-retry", async () => {}, { retry: { tries: 3 } as never })),
      await messageOf(() => firm.defineJob("bad-timeout", async () => {}, { timeout: 0 })),
      await messageOf(() => new FirmQueue({ databaseUrl: "sqlite::memory:", pollInterval: 5 } as never)),
    ];
    await firm.close();
    messages.push(await messageOf(() => job.enqueue(null)));
    messages.push(await messageOf(() => firm.getJob(1)));
    for (const message of messages) {
      expect(message).not.toMatch(DOUBLED);
      // A message starts with what the user called or passed, never with an internal name and a colon.
      expect(message).not.toMatch(/^[a-z]+: /);
    }
    expect(messages[0]).toContain('Unknown enqueueAll("wording") each[0] option "delay"');
    expect(messages.at(-1)).toMatch(/^This FirmQueue instance has been closed/);
  });
});

describeEachDatabase("migrate logs one line", (env) => {
  it("one info line for a fresh database, nothing at info when up to date", async () => {
    const lines: { level: string; message: string; fields: Record<string, unknown> | undefined }[] = [];
    const record =
      (level: string) =>
      (message: string, fields?: Record<string, unknown>): void => {
        lines.push({ level, message, fields });
      };
    const logger: Logger = {
      debug: record("debug"),
      info: record("info"),
      warn: record("warn"),
      error: record("error"),
    };
    // A prefix of its own: tables nobody has created yet in the test's database.
    const firm = env.firm({ logger, tablePrefix: "quiet_" });
    expect(await firm.migrate()).toHaveLength(MIGRATIONS.length);
    expect(lines.filter((line) => line.level !== "debug")).toEqual([
      { level: "info", message: "migrations applied", fields: expect.objectContaining({ count: MIGRATIONS.length }) },
    ]);
    lines.length = 0;
    expect(await firm.migrate()).toEqual([]);
    expect(lines.filter((line) => line.level !== "debug")).toEqual([]);
  });
});
