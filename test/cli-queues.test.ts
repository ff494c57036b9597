import { describe, expect, it } from "vitest";
import { expectCliRefuses } from "./support/cli-refusals.js";
import { describeEachDatabase } from "./support/harness.js";
import { runCli } from "./support/processes.js";

describe("CLI: queues arguments", () => {
  it("are checked before anything is done, with exit status 2", async () => {
    await expectCliRefuses(["queues", "pause"], "missing required argument 'name'");
    await expectCliRefuses(["queues", "clear", "mail", "--batch-size", "0"], "must be a whole number of at least 1");
    await expectCliRefuses(["queues", "list", "--bogus"], "unknown option '--bogus'");
    await expectCliRefuses(["queues", "clear", "mail"], "pass --yes to confirm");
  });
});

describeEachDatabase("CLI: queues", (env) => {
  const cli = (args: string[]) => runCli(["queues", ...args, "--database-url", env.url]);

  it("list shows every queue's counts as a table or JSON, and pause and resume change it", async () => {
    const firm = env.firm();
    const job = firm.defineJob("work", async () => {});
    const failing = firm.defineJob("fails", async () => {
      throw new Error("no");
    });
    await failing.enqueue(null, { queue: "mail" });
    await firm.drain();
    await job.enqueueAll([{}, {}, {}], { queue: "mail" });
    await job.enqueue({}, { queue: "reports", wait: "1h" });

    const paused = await cli(["pause", "mail"]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain("Paused queue mail.");
    const table = await cli(["list"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/QUEUE\s+READY\s+SCHEDULED\s+BLOCKED\s+RUNNING\s+FAILED\s+LATENCY\s+STATUS/);
    expect(table.stdout).toMatch(/mail\s+3\s+0\s+0\s+0\s+1\s+\d+ (ms|s)\s+paused/);
    expect(table.stdout).toMatch(/reports\s+0\s+1\s+0\s+0\s+0\s+-\s+active/);
    const resumed = await cli(["resume", "mail", "--json"]);
    expect(JSON.parse(resumed.stdout)).toEqual({ queue: "mail", paused: false });
    const json = await cli(["list", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ name: "mail", ready: 3, failed: 1, paused: false }),
      expect.objectContaining({ name: "reports", ready: 0, scheduled: 1, paused: false }),
    ]);
  });

  it("clear needs --yes off a terminal, then deletes the ready jobs in batches", async () => {
    const firm = env.firm();
    const job = firm.defineJob("work", async () => {});
    const ready = (await job.enqueueAll([{}, {}, {}, {}, {}], { queue: "mail" })).map((result) => result.id);
    const later = (await job.enqueue({}, { queue: "mail", wait: "1h" })).id;
    const refused = await cli(["clear", "mail"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("queues clear: this changes many jobs for good; pass --yes");
    expect(await firm.getJob(ready[0]!)).toMatchObject({ state: "ready" });

    const cleared = await cli(["clear", "mail", "--yes", "--batch-size", "2"]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toContain("Cleared 5 waiting job(s) from queue mail.");
    // No progress bar, prompt or escape codes when nobody is at a terminal.
    expect(cleared.stderr).toBe("");
    for (const id of ready) expect(await firm.getJob(id)).toBeNull();
    expect(await firm.getJob(later)).toMatchObject({ state: "scheduled" });
    const again = await cli(["clear", "mail", "-y", "--json"]);
    expect(JSON.parse(again.stdout)).toEqual({ queue: "mail", cleared: 0 });
  });
});
