import { describe, expect, it } from "vitest";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { runCli } from "./support/processes.js";

describe("CLI: jobs cancel arguments", () => {
  it("are checked before anything is done", async () => {
    const none = await runCli(["jobs", "cancel", "--database-url", "sqlite::memory:"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("give the ids of the jobs, or --queue / --name / --key");
    const both = await runCli(["jobs", "cancel", "3", "--queue", "a", "--database-url", "sqlite::memory:"]);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain("not both");
    const notId = await runCli(["jobs", "cancel", "x1", "--database-url", "sqlite::memory:"]);
    expect(notId.code).toBe(1);
    expect(notId.stderr).toContain('"x1" is not a job id');
  });
});

describeEachDatabase("CLI: jobs cancel", (env) => {
  it("cancels by id and by filter, printing what it did and the count", async () => {
    const firm = env.firm();
    const job = firm.defineJob("work", async () => {});
    const one = await enqueued(job.enqueue(null));
    const done = await enqueued(job.enqueue(null, { queue: "elsewhere" }));
    await firm.drain({ queues: "elsewhere" });
    await job.enqueueAll([null, null], { queue: "bulk" });
    const byId = await runCli(["jobs", "cancel", String(one), String(done), "--database-url", env.url]);
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toContain(`job ${one}: cancelled`);
    expect(byId.stdout).toContain(`job ${done}: had already ended`);
    expect(byId.stdout).toContain("Cancelled 1 job(s).");
    expect((await firm.getJob(one))?.state).toBe("cancelled");
    const byQueue = await runCli(["jobs", "cancel", "--queue", "bulk", "--database-url", env.url]);
    expect(byQueue.code, byQueue.stderr).toBe(0);
    expect(byQueue.stdout).toContain("Cancelled 2 job(s).");
    const missing = await runCli(["jobs", "cancel", "99999", "--database-url", env.url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Job 99999 does not exist");
  });
});
