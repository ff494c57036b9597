import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnCli } from "./support/processes.js";

describeEachDatabase("a fork-mode child killed at the stop deadline", (env) => {
  // The supervisor used to put every claim of a child it killed at shutdownTimeout + 5 s back in
  // line, those of jobs that had run included: such a job ran again with no attempt counted.
  it("leaves the claims of jobs that ran to crash recovery and puts the unstarted ones back in line", async () => {
    const log = join(mkdtempSync(join(tmpdir(), "firm-queue-hog-")), "runs.log");
    const firm = env.firm();
    const hog = await firm.enqueue("hog", {}, { undeclared: true });
    const quick = await Promise.all([...Array(4)].map(() => firm.enqueue("quick", {}, { undeclared: true })));
    const host = spawnCli(
      [
        "start",
        "--require",
        "test/fixtures/hog-jobs.mjs",
        "--mode",
        "fork",
        "--concurrency",
        "1",
        "--prefetch",
        "8",
        "--polling-interval",
        "50ms",
        "--shutdown-timeout",
        "300ms",
      ],
      { FIRM_QUEUE_DATABASE_URL: env.url, FIRM_QUEUE_LOG_LEVEL: "info", HOG_LOG: log },
    );
    const db = await env.db();
    let stderr = "";
    try {
      await waitFor(
        async () =>
          existsSync(log) &&
          readFileSync(log, "utf8").includes("start") &&
          (await countRows(db, "firm_queue_claimed_executions")) === 5,
        30_000,
        "the hog running and the quick jobs claimed behind it",
      );
      expect(readFileSync(log, "utf8").trim()).toBe(`start ${hog.id}`);
      host.child.kill("SIGTERM");
      const exit = await host.finished;
      expect(exit.code, exit.stderr).toBe(0);
      stderr = exit.stderr;
    } finally {
      host.child.kill("SIGKILL");
    }
    // The hog ran: its claim is still there, its process gone. The quick jobs wait, untouched.
    expect(await firm.getJob(Number(hog.id))).toMatchObject({ state: "claimed", attempts: 0 });
    for (const job of quick) expect(await firm.getJob(Number(job.id))).toMatchObject({ state: "ready", attempts: 0 });
    expect(stderr).toMatch(/child killed at the shutdown deadline/);

    // Crash recovery judges the hog's run: a failed attempt (its only one).
    firm.defineJob("hog", () => undefined);
    firm.defineJob("quick", () => undefined);
    const supervisor = await firm.start({ workers: [{ pollingInterval: 50 }] });
    try {
      await waitFor(
        async () =>
          (await countRows(db, "firm_queue_ready_executions")) +
            (await countRows(db, "firm_queue_claimed_executions")) ===
          0,
        30_000,
        "the quick jobs run",
      );
    } finally {
      await supervisor.stop();
    }
    expect(await firm.getJob(Number(hog.id))).toMatchObject({
      state: "failed",
      attempts: 1,
      error: { name: "ProcessMissingError" },
    });
    for (const job of quick)
      expect(await firm.getJob(Number(job.id))).toMatchObject({ state: "finished", attempts: 1 });
  }, 90_000);
});
