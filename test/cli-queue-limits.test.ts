import { describe, expect, it } from "vitest";
import { parseTypedRateLimit } from "../src/cli/queue-limit-commands.js";
import { UsageError } from "../src/cli/usage-error.js";
import { expectCliRefuses } from "./support/cli-refusals.js";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { runCli } from "./support/processes.js";

describe("CLI: queues limit arguments", () => {
  it("reads LIMIT/PERIOD", () => {
    expect(parseTypedRateLimit("queues limit", "10/1s")).toEqual({ limit: 10, period: "1s", periodMs: 1000 });
    expect(parseTypedRateLimit("queues limit", "600/1m")).toMatchObject({ limit: 600, periodMs: 60_000 });
    expect(parseTypedRateLimit("queues limit", "5/500")).toMatchObject({ limit: 5, periodMs: 500 });
    for (const text of ["10", "ten/1s", "10/", "0/1s", "10/50ms", "10/soon", "1.5/1s", "-1/1s", "10/1s/2"])
      expect(() => parseTypedRateLimit("queues limit", text), text).toThrow(UsageError);
  });

  it("are checked before connecting, with exit status 2", async () => {
    await expectCliRefuses(["queues", "limit", "mail", "10"], 'queues limit: "10" is not a rate limit');
    await expectCliRefuses(["queues", "limit", "mail", "0/1s"], "rate limit.limit must be a whole number");
    await expectCliRefuses(["queues", "limit", "mail", "10/50ms"], "rate limit.period must be from 100 ms");
    await expectCliRefuses(["queues", "limit", "mail"], "missing required argument 'rate'");
    await expectCliRefuses(["queues", "unlimit"], "missing required argument 'name'");
  });

  it("are in --help", async () => {
    const help = await runCli(["queues", "--help"]);
    expect(help.stdout).toMatch(/limit \[options\] <name> <rate>/);
    expect(help.stdout).toMatch(/unlimit \[options\] <name>/);
  });
});

describeEachDatabase("CLI: queues limit and unlimit", (env) => {
  const cli = (args: string[]) => runCli(["queues", ...args, "--database-url", env.url]);

  it("limit stores the queue's budget, changes it, unlimit removes it; --json for scripts", async () => {
    const db = await env.db();
    const set = await cli(["limit", "mail", "10/1s"]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain("Queue mail is limited to 10 start(s) per 1000 ms.");
    const changed = await cli(["limit", "mail", "600/1m", "--json"]);
    expect(changed.code, changed.stderr).toBe(0);
    expect(JSON.parse(changed.stdout)).toEqual({ queue: "mail", limit: 600, periodMs: 60_000 });
    expect(await db.selectFrom("firm_queue_rate_budgets").selectAll().execute()).toEqual([
      expect.objectContaining({ key: "queue:mail", queue_name: "mail", limit_count: 600, period_ms: 60_000 }),
    ]);
    const removed = await cli(["unlimit", "mail"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain("Removed the rate limit of queue mail.");
    expect(await countRows(db, "firm_queue_rate_budgets")).toBe(0);
    const again = await cli(["unlimit", "mail", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ queue: "mail", removed: false });
  });

  it("a bad queue name is refused by the operation with status 1, nothing written", async () => {
    const bad = await cli(["limit", " ", "10/1s"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/queues\.setRateLimit queue/);
    expect(await countRows(await env.db(), "firm_queue_rate_budgets")).toBe(0);
  });
});
