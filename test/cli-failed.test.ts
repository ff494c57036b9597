import { describe, expect, it } from "vitest";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { expectCliRefuses } from "./support/cli-refusals.js";
import { describeEachDatabase } from "./support/harness.js";
import { runCli } from "./support/processes.js";

describe("CLI: failed-job arguments", () => {
  it("are checked before anything is done", async () => {
    await expectCliRefuses(["failed", "retry"], "give the ids of the jobs, or --all");
    await expectCliRefuses(["failed", "discard", "--all", "12"], "not both");
    await expectCliRefuses(["failed", "retry", "12", "--name", "x"], "--name and --queue go with --all");
    await expectCliRefuses(["failed", "retry", "abc"], '"abc" is not a job id');
  });
});

describeEachDatabase("CLI: failed jobs", (env) => {
  async function withFailedJobs(count: number) {
    const firm = env.firm();
    const job = firm.defineJob(
      "charge",
      async (args: { n: number }) => {
        throw new Error(`card ${args.n} declined\nmore detail on a second line`);
      },
      { queue: "payments" },
    );
    const other = firm.defineJob("email", async () => {
      throw new Error("smtp down");
    });
    const ids = (await job.enqueueAll(Array.from({ length: count }, (_, n) => ({ n })))).map((result) => result.id);
    const otherId = (await other.enqueue(null)).id;
    await firm.drain({ concurrency: 4 });
    return { firm, ids, otherId };
  }
  const cli = (args: string[]) => runCli(["failed", ...args, "--database-url", env.url]);

  it("list shows failed jobs as a table or JSON lines, filtered", async () => {
    const { ids, otherId } = await withFailedJobs(2);
    const table = await cli(["list"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain("3 failed job(s):");
    expect(table.stdout).toMatch(/ID\s+NAME\s+QUEUE\s+ATTEMPTS\s+FAILED AT\s+ERROR/);
    expect(table.stdout).toMatch(
      new RegExp(`${ids[0]}\\s+charge\\s+payments\\s+1\\s+\\S+\\s+Error: card 0 declined\\n`),
    );
    expect(table.stdout).not.toContain("second line");
    const filtered = await cli(["list", "--name", "email", "--json"]);
    expect(filtered.code, filtered.stderr).toBe(0);
    const lines = filtered.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({ id: otherId, name: "email", error: expect.objectContaining({ message: "smtp down" }) }),
    ]);
    const paged = await cli(["list", "--limit", "1"]);
    expect(paged.stdout).toContain("3 failed job(s), showing 1:");
  });

  it("retry and discard by id", async () => {
    const { firm, ids, otherId } = await withFailedJobs(2);
    const retried = await cli(["retry", String(ids[0]), String(ids[1])]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain(`Retried 2 job(s): ${ids[0]}, ${ids[1]}`);
    expect(await firm.getJob(ids[0]!)).toMatchObject({ state: "ready", attempts: 0 });
    const discarded = await cli(["delete", String(otherId)]);
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(discarded.stdout).toContain(`Deleted 1 job(s): ${otherId}`);
    expect(await firm.getJob(otherId)).toBeNull();
    const empty = await cli(["list"]);
    expect(empty.stdout).toContain("No failed jobs.");
  });

  it("retry --all and delete --all (or its old name, discard --all) work in batches and print progress", async () => {
    const { firm, ids, otherId } = await withFailedJobs(5);
    const retried = await cli(["retry", "--all", "--name", "charge", "--batch-size", "2"]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain("Retried 2 job(s) in this batch, 2 so far");
    expect(retried.stdout).toContain("Retried 1 job(s) in this batch, 5 so far");
    expect(retried.stdout).toContain("Retried 5 failed job(s).");
    for (const id of ids) expect((await firm.getJob(id))?.state).toBe("ready");
    // Deleting by filter is for good: off a terminal it needs --yes, and changes nothing without it.
    const unconfirmed = await cli(["delete", "--all"]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("failed delete: this changes many jobs for good; pass --yes");
    expect(await firm.getJob(otherId)).not.toBeNull();
    const discarded = await cli(["discard", "--all", "--yes"]);
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(discarded.stdout).toContain("Deleted 1 failed job(s).");
    expect(await firm.getJob(otherId)).toBeNull();
  });

  it("refuses bad requests clearly, changing nothing", async () => {
    const { firm, ids } = await withFailedJobs(1);
    const missing = await cli(["retry", "99999999"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Job 99999999 does not exist");
    // A retried job that a worker has claimed is running: deleting it is refused.
    await firm.failedJobs.retry(ids[0]!);
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "cli-test" }, new Date());
    await claimJobs(database, new QueueSelector("*"), 5, processId);
    const running = await cli(["delete", String(ids[0])]);
    expect(running.code).toBe(1);
    expect(running.stderr).toContain(`Job ${ids[0]} is running`);
    expect(await firm.getJob(ids[0]!)).toMatchObject({ state: "claimed" });
  });
});
