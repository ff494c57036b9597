import { expect, it } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnCli } from "./support/processes.js";

describeEachDatabase("CLI logs", (env) => {
  it("start --log-format json --log-job-outcomes: every line is JSON, the job's lines carry its id, in fork-mode children too", async () => {
    const firm = env.firm();
    const id = (await firm.enqueue("greet", { name: "Ada" }))!;
    const started = spawnCli(
      [
        "start",
        "--require",
        "test/fixtures/logged-jobs.ts",
        "--database-url",
        env.url,
        "--polling-interval",
        "50ms",
        "--log-format",
        "json",
        "--log-job-outcomes",
      ],
      { FIRM_QUEUE_LOG_FORMAT: undefined, FIRM_QUEUE_LOG_JOB_OUTCOMES: undefined },
    );
    try {
      await waitFor(() => started.output().includes('"msg":"job finished"'), 30_000, "the job finished line");
    } finally {
      started.child.kill("SIGTERM");
    }
    const result = await started.finished;
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.every((line) => typeof line.msg === "string" && typeof line.pid === "number")).toBe(true);
    const greeting = lines.find((line) => line.msg === "greeting");
    expect(greeting).toMatchObject({
      level: "info",
      name: "Ada",
      jobId: id,
      job: "greet",
      queue: "default",
      attempt: 1,
    });
    const finished = lines.find((line) => line.msg === "job finished");
    expect(finished).toMatchObject({ level: "info", jobId: id, job: "greet", durationMs: expect.any(Number) });
    // Fork mode: the job ran in a child, not in the supervisor that parsed the flags.
    expect(finished!.pid).not.toBe(started.child.pid);
  });

  it("rejects an unknown --log-format", async () => {
    const result = await spawnCli(["drain", "--log-format", "xml", "-r", "test/fixtures/logged-jobs.ts"]).finished;
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("--log-format");
  });
});
