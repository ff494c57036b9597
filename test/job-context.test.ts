import { describe, expect, it } from "vitest";
import { jobContext } from "../src/roles/job-context.js";
import type { JobRow } from "../src/models/job.js";
import type { Logger } from "../src/logger.js";

// A handler's context builds its logger, enqueuedAt and signal when first read; spreading it
// (as middleware and users do) must still copy them, and they must not change between reads.
describe("jobContext", () => {
  const job = {
    id: 7,
    class_name: "report",
    queue_name: "mail",
    priority: 3,
    attempts: 1,
    created_at: "2026-12-01T10:00:00.123Z",
  } as unknown as JobRow;
  const lines: [string, Record<string, unknown> | undefined][] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: (message, fields) => void lines.push([message, fields]),
    warn: () => undefined,
    error: () => undefined,
  };

  it("makes the signal only when read, and spreading copies every field", async () => {
    let made = 0;
    const controller = new AbortController();
    const context = jobContext(
      job,
      logger,
      () => undefined,
      () => {
        made++;
        return controller.signal;
      },
      async (jobId) => [{ id: jobId - 1, name: "resize", state: "finished", result: { ok: true } }],
    );
    expect(made).toBe(0);
    const copy = { ...context };
    expect(made).toBe(1);
    expect(copy).toMatchObject({ jobId: 7, name: "report", queue: "mail", priority: 3, attempt: 2 });
    expect(copy.signal).toBe(controller.signal);
    expect(copy.enqueuedAt).toEqual(new Date("2026-12-01T10:00:00.123Z"));
    expect(copy.logger).toBe(context.logger);
    expect(await copy.dependencyResults()).toEqual([
      { id: 6, name: "resize", state: "finished", result: { ok: true } },
    ]);
  });

  it("binds the logger to the job once", () => {
    const context = jobContext(
      job,
      logger,
      () => undefined,
      () => new AbortController().signal,
      async () => [],
    );
    expect(context.logger).toBe(context.logger);
    expect(context.enqueuedAt).toBe(context.enqueuedAt);
    context.logger.info("sent", { to: "a" });
    expect(lines.at(-1)).toEqual(["sent", { jobId: 7, job: "report", queue: "mail", attempt: 2, to: "a" }]);
  });
});
