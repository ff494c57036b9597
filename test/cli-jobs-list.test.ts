import { describe, expect, it } from "vitest";
import { expectCliRefuses } from "./support/cli-refusals.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { runCli } from "./support/processes.js";

describe("CLI: jobs list, show, retry and enqueue arguments", () => {
  it("are checked before anything is done, with exit status 2", async () => {
    await expectCliRefuses(["jobs", "list", "--state", "lost"], "must be one of scheduled, blocked, ready");
    await expectCliRefuses(["jobs", "list", "--limit", "501"], "must be at most 500");
    await expectCliRefuses(["jobs", "show"], "missing required argument 'id'");
    await expectCliRefuses(["jobs", "show", "x"], 'jobs show: "x" is not a job id');
    await expectCliRefuses(["jobs", "retry"], "missing required argument 'ids'");
    await expectCliRefuses(["jobs", "enqueue", "x", "--args", "{nope"], "jobs enqueue: --args is not JSON");
    await expectCliRefuses(["jobs", "enqueue", "x", "--priority", "high"], "must be a whole number");
    await expectCliRefuses(["jobs", "enqueue", "x", "--wait", "soon"], "--wait must be");
  });
});

describeEachDatabase("CLI: jobs list, show, retry and enqueue", (env) => {
  const cli = (args: string[]) => runCli(["jobs", ...args, "--database-url", env.url]);

  it("list shows the newest jobs of every state, or one state page by page, filtered", async () => {
    const firm = env.firm();
    const work = firm.defineJob("work", async () => {});
    const fails = firm.defineJob("fails", async () => {
      throw new Error("out of paper\nsecond line");
    });
    const done = await enqueued(work.enqueue({ n: 0 }, { queue: "print" }));
    const failed = await enqueued(fails.enqueue({ n: 1 }, { queue: "print" }));
    await firm.drain();
    const ready = await enqueued(work.enqueue({ n: 2 }, { key: "acct-7" }));
    const later = await enqueued(work.enqueue({ n: 3 }, { wait: "1h", queue: "print" }));

    // Read-only commands, so they run at once: each is a process start.
    const [all, byQueue, byKey, byName] = await Promise.all([
      cli(["list"]),
      cli(["list", "--queue", "print", "--json"]),
      cli(["list", "--key", "acct-7", "--json"]),
      cli(["list", "--name", "fails", "--state", "failed", "--json"]),
    ]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/ID\s+STATE\s+NAME\s+QUEUE\s+PRIORITY\s+ATTEMPTS\s+SINCE \(UTC\)\s+ARGUMENTS \/ ERROR/);
    const order = all.stdout
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => line.split(/\s+/).slice(0, 2).join(" "));
    expect(order).toEqual([`${later} scheduled`, `${ready} ready`, `${failed} failed`, `${done} finished`]);
    expect(all.stdout).toMatch(
      new RegExp(`${failed}\\s+failed\\s+fails\\s+print\\s+0\\s+1\\s+\\S+\\s+Error: out of paper\\n`),
    );
    expect(all.stdout).toMatch(new RegExp(`${ready}\\s+ready\\s+work\\s+default\\s+0\\s+0\\s+\\S+\\s+\\{ "n": 2 \\}`));

    expect(JSON.parse(byQueue.stdout).jobs.map((job: { id: number }) => job.id)).toEqual([later, failed, done]);
    expect(JSON.parse(byKey.stdout)).toEqual({
      jobs: [expect.objectContaining({ id: ready, state: "ready", arguments: { n: 2 } })],
      nextCursor: null,
    });
    expect(JSON.parse(byName.stdout).jobs).toEqual([
      expect.objectContaining({ id: failed, error: expect.objectContaining({ message: "out of paper\nsecond line" }) }),
    ]);
  });

  it("list --state pages with --cursor", async () => {
    const firm = env.firm();
    const work = firm.defineJob("work", async () => {});
    const ready = await enqueued(work.enqueue({ n: 2 }));
    await work.enqueueAll([{ n: 4 }, { n: 5 }]);
    const [first, second, badCursor] = await Promise.all([
      cli(["list", "--state", "ready", "--limit", "2"]),
      cli(["list", "--state", "running", "--limit", "2"]),
      cli(["list", "--state", "ready", "--cursor", "zzz"]),
    ]);
    expect(first.code, first.stderr).toBe(0);
    const cursor = /More: add --cursor (\S+)/.exec(first.stdout)?.[1];
    expect(cursor).toEqual(expect.any(String));
    expect(second.stdout).toContain("No jobs matched.");
    const next = await cli(["list", "--state", "ready", "--limit", "2", "--cursor", cursor!, "--json"]);
    expect(JSON.parse(next.stdout)).toEqual({ jobs: [expect.objectContaining({ id: ready })], nextCursor: null });
    expect(badCursor.code).toBe(1);
  });

  it("list without --state pages through every state with --cursor, each job once", async () => {
    const firm = env.firm();
    const work = firm.defineJob("work", async () => {});
    const fails = firm.defineJob("fails", async () => {
      throw new Error("jammed");
    });
    const ids = [await enqueued(work.enqueue({ n: 0 })), await enqueued(fails.enqueue({ n: 1 }))];
    await firm.drain();
    for (let n = 2; n < 5; n++) ids.push(await enqueued(work.enqueue({ n })));
    ids.push(await enqueued(work.enqueue({ n: 5 }, { wait: "1h" })));

    const seen: number[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 6; page++) {
      const result = await cli(["list", "--limit", "2", "--json", ...(cursor ? ["--cursor", cursor] : [])]);
      expect(result.code, result.stderr).toBe(0);
      const body = JSON.parse(result.stdout) as { jobs: { id: number }[]; nextCursor: string | null };
      expect(body.jobs.length).toBeLessThanOrEqual(2);
      seen.push(...body.jobs.map((job) => job.id));
      cursor = body.nextCursor;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(seen).toHaveLength(ids.length);
    expect([...seen].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));

    const text = await cli(["list", "--limit", "5"]);
    expect(text.stdout).toMatch(/More: add --cursor \S+/);
    const [forged, foreign] = await Promise.all([
      cli(["list", "--cursor", "zzz"]),
      cli(["list", "--cursor", Buffer.from(JSON.stringify({ lost: null })).toString("base64url")]),
    ]);
    expect(forged.code).toBe(1);
    expect(forged.stderr).toContain("Not a job listing cursor");
    expect(foreign.code).toBe(1);
  });

  it("show prints a job's fields, arguments, error and timeline; retry sends failed jobs back", async () => {
    const firm = env.firm();
    const fails = firm.defineJob("fails", async () => {
      throw new Error("out of paper");
    });
    const id = await enqueued(fails.enqueue({ copies: 2 }, { queue: "print", key: "doc-9" }));
    await firm.drain();

    const [shown, json, missing] = await Promise.all([
      cli(["show", String(id)]),
      cli(["show", String(id), "--json"]),
      cli(["show", "987654"]),
    ]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id:\\s+${id}$`, "m"));
    expect(shown.stdout).toMatch(/^state:\s+failed$/m);
    expect(shown.stdout).toMatch(/^unique key:\s+doc-9$/m);
    expect(shown.stdout).toMatch(/arguments:\n {2}\{\n {4}"copies": 2\n {2}\}/);
    expect(shown.stdout).toMatch(/error:\n {2}Error: out of paper/);
    expect(shown.stdout).toMatch(/timeline:\n\s+AT \(UTC\)\s+EVENT\s+DETAIL\n\s+\S+\s+enqueued/);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, state: "failed", key: "doc-9", arguments: { copies: 2 } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Job 987654 does not exist");

    const retried = await cli(["retry", String(id)]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain(`Retried 1 job(s): ${id}`);
    expect(await firm.getJob(id)).toMatchObject({ state: "ready", attempts: 0 });
    const notFailed = await cli(["retry", String(id)]);
    expect(notFailed.code).toBe(1);
    expect(notFailed.stderr).toContain(`Job ${id}`);
  });

  it("enqueue writes a job by name with its declaration's defaults, or undeclared on request", async () => {
    const firm = env.firm();
    const [declared, refused] = await Promise.all([
      runCli(
        [
          "jobs",
          "enqueue",
          "record",
          "--args",
          '{"sleepMs":1}',
          "--priority",
          "-3",
          "--require",
          "test/fixtures/greeter.ts",
        ],
        { FIRM_QUEUE_DATABASE_URL: env.url },
      ),
      cli(["enqueue", "report"]),
    ]);
    expect(declared.code, declared.stderr).toBe(0);
    const id = Number(/Enqueued job (\d+) \(record\)\./.exec(declared.stdout)?.[1]);
    expect(await firm.getJob(id)).toMatchObject({
      name: "record",
      queue: "default",
      priority: -3,
      arguments: { sleepMs: 1 },
    });

    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('no loaded module declares "report"');
    const later = await cli([
      "enqueue",
      "report",
      "--undeclared",
      "--queue",
      "slow",
      "--wait",
      "5m",
      "--key",
      "r-1",
      "--json",
    ]);
    expect(later.code, later.stderr).toBe(0);
    const result = JSON.parse(later.stdout);
    expect(result).toEqual({ status: "created", id: expect.any(Number) });
    const job = await firm.getJob(result.id);
    expect(job).toMatchObject({ name: "report", queue: "slow", state: "scheduled", key: "r-1", arguments: null });
    expect(job!.scheduledAt!.getTime() - Date.now()).toBeGreaterThan(4 * 60_000);
    const duplicate = await cli(["enqueue", "report", "--undeclared", "--key", "r-1"]);
    expect(duplicate.code, duplicate.stderr).toBe(0);
    expect(duplicate.stdout).toContain(`Not enqueued: job ${result.id} holds that unique key.`);
  });
});
