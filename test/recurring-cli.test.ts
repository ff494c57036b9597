import { expect, it } from "vitest";
import { describeEachDatabaseAtOnce, waitFor } from "./support/harness.js";
import { runCli, spawnCli } from "./support/processes.js";

describeEachDatabaseAtOnce("recurring tasks from a config file", (env) => {
  it("firm-queue start runs the scheduler in its own child process; ticks become jobs the workers run", async () => {
    const started = spawnCli(["start", "--config", "test/fixtures/recurring.config.ts"], {
      FIRM_QUEUE_DATABASE_URL: env.url,
    });
    const db = await env.db();
    try {
      await waitFor(
        async () => {
          const rows = await db.selectFrom("firm_queue_recurring_executions").select("run_at").execute();
          return rows.length >= 3;
        },
        20_000,
        `three ticks; output:\n${started.output()}`,
      );
      const processes = await db.selectFrom("firm_queue_processes").select(["kind", "pid", "supervisor_id"]).execute();
      const scheduler = processes.find((row) => row.kind === "Scheduler");
      const supervisor = processes.find((row) => row.kind === "Supervisor");
      expect(scheduler, JSON.stringify(processes)).toBeDefined();
      // Fork mode: the scheduler is a child of the supervisor, in a process of its own.
      expect(scheduler!.supervisor_id).not.toBeNull();
      expect(scheduler!.pid).not.toBe(supervisor!.pid);
      const task = await db
        .selectFrom("firm_queue_recurring_tasks")
        .select(["key", "schedule", "static"])
        .executeTakeFirstOrThrow();
      expect(task).toMatchObject({ key: "every-second", schedule: "* * * * * *" });
      const runs = await db.selectFrom("firm_queue_recurring_executions").select(["run_at", "job_id"]).execute();
      for (const run of runs) expect(new Date(run.run_at).getMilliseconds()).toBe(0);
      expect(new Set(runs.map((run) => new Date(run.run_at).getTime())).size).toBe(runs.length);
      await waitFor(
        async () => {
          const finished = await db
            .selectFrom("firm_queue_jobs")
            .select("id")
            .where("finished_at", "is not", null)
            .execute();
          return finished.length >= 2;
        },
        10_000,
        "the workers to run the ticks' jobs",
      );
    } finally {
      started.child.kill("SIGTERM");
    }
    const result = await started.finished;
    expect(result.code, result.stderr).toBe(0);
    expect(await db.selectFrom("firm_queue_processes").select("id").execute()).toEqual([]);
  });
});

it("firm-queue check lists recurring tasks and names a bad one", async () => {
  const good = await runCli(["check", "--config", "test/fixtures/recurring.config.ts"], {
    FIRM_QUEUE_DATABASE_URL: "sqlite:unused.sqlite3",
  });
  expect(good.code, good.stderr).toBe(0);
  expect(good.stdout).toContain('recurring:    every-second: record "* * * * * *" (UTC)');
  expect(good.stdout).toContain("scheduler:    dynamicTasks=false");
  const bad = await runCli(["check", "--config", "test/fixtures/config/bad-recurring.config.ts"], {
    FIRM_QUEUE_DATABASE_URL: "sqlite:unused.sqlite3",
  });
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain("broken");
});
