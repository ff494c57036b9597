import { describe, expect, it } from "vitest";
import { expectCliRefuses } from "./support/cli-refusals.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { runCli } from "./support/processes.js";

describe("CLI: jobs cancel arguments", () => {
  it("are checked before anything is done", async () => {
    await expectCliRefuses(["jobs", "cancel"], "give the ids of the jobs, or --queue / --name / --key");
    await expectCliRefuses(["jobs", "cancel", "3", "--queue", "a"], "not both");
    await expectCliRefuses(["jobs", "cancel", "x1"], '"x1" is not a job id');
    await expectCliRefuses(
      ["jobs", "cancel", "--queue", "bulk"],
      "jobs cancel: this changes many jobs for good; pass --yes",
    );
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
    const byQueue = await runCli(["jobs", "cancel", "--queue", "bulk", "--yes", "--database-url", env.url]);
    expect(byQueue.code, byQueue.stderr).toBe(0);
    expect(byQueue.stdout).toContain("Cancelled 2 job(s).");
    const missing = await runCli(["jobs", "cancel", "99999", "--database-url", env.url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Job 99999 does not exist");
  });
});
