import { expect, it } from "vitest";
import { SchemaOutOfDateError } from "../src/index.js";
import { missingTableOf } from "../src/database/missing-table.js";
import { describeEachDatabase } from "./support/harness.js";

/** The error a call rejects with. */
async function rejection(call: () => Promise<unknown>): Promise<unknown> {
  return call().then(
    () => expect.unreachable("expected a rejection"),
    (error: unknown) => error,
  );
}

describeEachDatabase("a database that was never migrated", (env) => {
  it("every path fails with SchemaOutOfDateError naming firm-queue migrate, never a raw driver error", async () => {
    // A prefix of its own: none of its tables exists in the test's database.
    const firm = env.firm({ tablePrefix: "never_" });
    const job = firm.defineJob("before-migrate", async () => {});
    const paths: Record<string, () => Promise<unknown>> = {
      enqueue: () => job.enqueue({}),
      enqueueAll: () => job.enqueueAll([{}, {}]),
      "enqueue by name": () => firm.enqueue("before-migrate", {}),
      getJob: () => firm.getJob(1),
      start: () => firm.start(),
      drain: () => firm.drain(),
      "inspect.queues": () => firm.inspect.queues(),
      "inspect.jobs": () => firm.inspect.jobs({ state: "ready" }),
      "inspect.job": () => firm.inspect.job(1),
      "inspect.processes": () => firm.inspect.processes(),
      "queues.pause": () => firm.queues.pause("default"),
      "queues.list": () => firm.queues.list(),
      "failedJobs.list": () => firm.failedJobs.list(),
      "failedJobs.retry": () => firm.failedJobs.retry(1),
      "jobs.cancel": () => firm.jobs.cancel(1),
      "recurring.list": () => firm.recurring.list(),
    };
    for (const [path, call] of Object.entries(paths)) {
      const error = await rejection(call);
      expect(error, path).toBeInstanceOf(SchemaOutOfDateError);
      expect((error as Error).message, path).toContain('run "firm-queue migrate"');
    }
    // Migrating makes the same instance work.
    await firm.migrate();
    expect(await firm.getJob(1)).toBeNull();
  });

  it("the error names the missing table and keeps the driver's error as its cause", async () => {
    const firm = env.firm({ tablePrefix: "absent_" });
    const error = (await rejection(() => firm.getJob(1))) as SchemaOutOfDateError;
    expect(error.missingTable).toBe("absent_jobs");
    expect(error.message).toContain("absent_jobs");
    expect(missingTableOf(error.cause)).toBe("absent_jobs");
  });
});
