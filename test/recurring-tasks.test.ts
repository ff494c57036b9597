import { expect, it } from "vitest";
import { RecurringTaskError } from "../src/index.js";
import { toDate } from "../src/database/schema.js";
import { countRows, describeEachDatabaseAtOnce, waitFor } from "./support/harness.js";
import { runCli } from "./support/processes.js";
import { FakeClock, recurringJobs, testScheduler } from "./support/recurring.js";

const NO_ROLES = { workers: [], dispatchers: [] } as const;

// The databases side by side: the slow tests wait on scheduler polls.
describeEachDatabaseAtOnce("recurring tasks", (env) => {
  async function taskRows() {
    const rows = await (await env.db()).selectFrom("firm_queue_recurring_tasks").selectAll().orderBy("key").execute();
    return rows.map((row) => ({
      key: row.key,
      schedule: row.schedule,
      timezone: row.timezone,
      job: row.class_name,
      queue: row.queue_name,
      priority: row.priority,
      static: Boolean(row.static),
      updatedAt: toDate(row.updated_at).getTime(),
    }));
  }

  it("start syncs declared tasks: adds new ones, updates changed ones, deletes removed ones, keeps dynamic ones", async () => {
    const firm = env.firm();
    firm.defineJob("report", async () => {});
    firm.defineJob("cleanup", async () => {});
    let supervisor = await firm.start({
      ...NO_ROLES,
      recurring: {
        nightly: { job: "report", schedule: "0 3 * * *", timezone: "Europe/Berlin", queue: "reports", priority: 4 },
        hourly: { job: "cleanup", schedule: "0 * * * *" },
        gone: { job: "cleanup", schedule: "@daily" },
      },
    });
    await supervisor.stop();
    const before = await taskRows();
    expect(before.map(({ updatedAt: _, ...row }) => row)).toEqual([
      { key: "gone", schedule: "@daily", timezone: "UTC", job: "cleanup", queue: null, priority: null, static: true },
      {
        key: "hourly",
        schedule: "0 * * * *",
        timezone: "UTC",
        job: "cleanup",
        queue: null,
        priority: null,
        static: true,
      },
      {
        key: "nightly",
        schedule: "0 3 * * *",
        timezone: "Europe/Berlin",
        job: "report",
        queue: "reports",
        priority: 4,
        static: true,
      },
    ]);
    await firm.recurring.schedule("dynamic", { job: "cleanup", schedule: "*/5 * * * *" });
    await new Promise((resolve) => setTimeout(resolve, 20)); // a visibly later updated_at

    supervisor = await firm.start({
      ...NO_ROLES,
      recurring: {
        nightly: { job: "report", schedule: "0 4 * * *", timezone: "Europe/Berlin", queue: "reports", priority: 4 },
        hourly: { job: "cleanup", schedule: "0 * * * *" },
        added: { job: "report", schedule: "0 12 * * MON" },
      },
    });
    await supervisor.stop();
    const after = await taskRows();
    expect(after.map((row) => `${row.key} ${row.schedule} ${row.static ? "static" : "dynamic"}`)).toEqual([
      "added 0 12 * * MON static",
      "dynamic */5 * * * * dynamic",
      "hourly 0 * * * * static",
      "nightly 0 4 * * * static",
    ]);
    const unchanged = (rows: typeof before) => rows.find((row) => row.key === "hourly")!.updatedAt;
    expect(unchanged(after)).toBe(unchanged(before));
    expect(after.find((row) => row.key === "nightly")!.updatedAt).toBeGreaterThan(
      before.find((row) => row.key === "nightly")!.updatedAt,
    );

    // Declaring nothing removes every declared task; starting without `recurring` touches none.
    supervisor = await firm.start({ ...NO_ROLES, scheduler: {} });
    await supervisor.stop();
    expect((await taskRows()).length).toBe(4);
    supervisor = await firm.start({ ...NO_ROLES, recurring: {} });
    await supervisor.stop();
    expect((await taskRows()).map((row) => row.key)).toEqual(["dynamic"]);
  });

  it("start refuses bad tasks, naming them, before anything runs or is written", async () => {
    const firm = env.firm();
    firm.defineJob("report", async () => {});
    const cases: [Record<string, unknown>, string][] = [
      [
        { job: "report", schedule: "0 25 * * *" },
        'Recurring task "bad": schedule "0 25 * * *" is not a valid cron expression',
      ],
      [
        { job: "reprot", schedule: "0 3 * * *" },
        'Recurring task "bad": job "reprot" is not defined (defined jobs: report)',
      ],
      [{ job: "report", schedule: "0 3 * * *", tz: "UTC" }, 'Recurring task "bad": unknown key "tz"'],
      [
        { job: "report", schedule: "0 3 * * *", timezone: "Europe/Berlinn" },
        'Recurring task "bad": timezone "Europe/Berlinn"',
      ],
    ];
    for (const [task, message] of cases) {
      const attempt = firm.start({ recurring: { ok: { job: "report", schedule: "@hourly" }, bad: task as never } });
      await expect(attempt).rejects.toThrow(RecurringTaskError);
      await expect(firm.start({ recurring: { bad: task as never } })).rejects.toThrow(message);
    }
    const db = await env.db();
    expect(await countRows(db, "firm_queue_recurring_tasks")).toBe(0);
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
  });

  it("registers a Scheduler process under the supervisor", async () => {
    const firm = env.firm();
    firm.defineJob("report", async () => {});
    const supervisor = await firm.start({
      ...NO_ROLES,
      recurring: { a: { job: "report", schedule: "@daily" } },
      scheduler: { dynamicTasks: true },
    });
    const rows = await (await env.db())
      .selectFrom("firm_queue_processes")
      .select(["kind", "supervisor_id", "metadata"])
      .orderBy("id")
      .execute();
    expect(rows.map((row) => row.kind)).toEqual(["Supervisor", "Scheduler"]);
    expect(rows[1]!.supervisor_id).toBe(supervisor.id);
    expect(JSON.parse(rows[1]!.metadata!)).toEqual({ staticTasks: 1, dynamicTasks: true });
    await supervisor.stop();
    expect(await countRows(await env.db(), "firm_queue_processes")).toBe(0);
  });

  it("schedule() and unschedule() manage dynamic tasks; declared keys and unknown jobs are refused", async () => {
    const firm = env.firm();
    firm.defineJob("report", async () => {});
    await (await firm.start({ ...NO_ROLES, recurring: { declared: { job: "report", schedule: "@daily" } } })).stop();
    await firm.recurring.schedule("mine", {
      job: "report",
      schedule: "0 3 * * *",
      args: { x: 1 },
      description: "mine",
    });
    await firm.recurring.schedule("mine", { job: "report", schedule: "0 4 * * *", timezone: "Asia/Tokyo" });
    await expect(firm.recurring.schedule("declared", { job: "report", schedule: "@hourly" })).rejects.toThrow(
      'Recurring task "declared": is declared in configuration (a static task)',
    );
    await expect(firm.recurring.unschedule("declared")).rejects.toThrow(RecurringTaskError);
    await expect(firm.recurring.schedule("typo", { job: "reprot", schedule: "@hourly" })).rejects.toThrow(
      'job "reprot" is not defined',
    );
    await expect(firm.recurring.schedule("bad", { job: "report", schedule: "@often" })).rejects.toThrow(
      "not a valid cron expression",
    );
    const list = await firm.recurring.list();
    expect(
      list.map(({ key, schedule, timezone, static: isStatic, args }) => ({ key, schedule, timezone, isStatic, args })),
    ).toEqual([
      { key: "declared", schedule: "@daily", timezone: "UTC", isStatic: true, args: null },
      { key: "mine", schedule: "0 4 * * *", timezone: "Asia/Tokyo", isStatic: false, args: null },
    ]);
    expect(await firm.recurring.unschedule("mine")).toBe(true);
    expect(await firm.recurring.unschedule("mine")).toBe(false);
    expect((await firm.recurring.list()).map((task) => task.key)).toEqual(["declared"]);
  });

  it("a scheduler with dynamic tasks enabled picks up added, changed and removed tasks at its polls", async () => {
    const firm = env.firm();
    firm.defineJob("tick", async () => {});
    const database = await firm.database();
    // Real time, so the task's real updated_at is within reach (a jump of hours reads as a suspension).
    const clock = new FakeClock(new Date().toISOString());
    const dynamic = testScheduler(database, { clock, recurring: null, dynamicTasks: true, pollingInterval: 5000 });
    const staticOnly = testScheduler(database, { clock, recurring: null });
    await dynamic.prepare();
    await staticOnly.prepare();
    expect(await dynamic.step(clock.now)).toBe(5000); // nothing to run: it sleeps until its next poll
    await firm.recurring.schedule("dyn", { job: "tick", schedule: "* * * * * *" });
    // The task's ticks count from its updated_at (the real time of the call), not from before.
    const row = await database.db
      .selectFrom("firm_queue_recurring_tasks")
      .select("updated_at")
      .where("key", "=", "dyn")
      .executeTakeFirstOrThrow();
    const changedAt = toDate(row.updated_at).getTime();
    clock.set(new Date(changedAt + 5000).toISOString());
    await dynamic.step(clock.now);
    await staticOnly.step(clock.now);
    expect(dynamic.taskKeys).toEqual(["dyn"]);
    expect(staticOnly.taskKeys).toEqual([]);
    clock.set(new Date(changedAt + 7000).toISOString());
    await dynamic.step(clock.now);
    const firstTick = Math.floor(changedAt / 1000) * 1000 + 1000;
    const expected = Array.from({ length: 7 }, (_, i) => new Date(firstTick + i * 1000).toISOString());
    expect((await recurringJobs(database.db)).map((tick) => `${tick.task} ${tick.runAt}`)).toEqual(
      expected.map((at) => `dyn ${at}`),
    );
    await firm.recurring.unschedule("dyn");
    clock.set(new Date(clock.now + 5000).toISOString());
    await dynamic.step(clock.now);
    expect(dynamic.taskKeys).toEqual([]);
  });

  it("a running scheduler runs a task scheduled in its own process at once, and one scheduled elsewhere at its next poll", async () => {
    const firm = env.firm();
    const other = env.firm();
    firm.defineJob("tick", async () => {});
    other.defineJob("tick", async () => {});
    const supervisor = await firm.start({ ...NO_ROLES, scheduler: { dynamicTasks: true, pollingInterval: "1h" } });
    const db = await env.db();
    const jobsOf = async (task: string) => (await recurringJobs(db)).filter((row) => row.task === task).length;
    await firm.recurring.schedule("local", { job: "tick", schedule: "* * * * * *" });
    await waitFor(async () => (await jobsOf("local")) >= 1, 15_000, "ticks of a task scheduled in-process");
    await supervisor.stop();

    const polling = await firm.start({ ...NO_ROLES, scheduler: { dynamicTasks: true, pollingInterval: 300 } });
    await other.recurring.schedule("remote", { job: "tick", schedule: "* * * * * *" });
    await waitFor(async () => (await jobsOf("remote")) >= 1, 15_000, "ticks of a task scheduled by another instance");
    await other.recurring.unschedule("remote");
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a poll, and a tick that may be under way
    const settled = await jobsOf("remote");
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await jobsOf("remote")).toBe(settled);
    await polling.stop();
  });

  it("firm-queue recurring lists tasks with schedule, next run and last run", async () => {
    const firm = env.firm();
    firm.defineJob("report", async () => {});
    expect((await runCli(["recurring", "--database-url", env.url])).stdout.trim()).toBe("No recurring tasks.");
    const database = await firm.database();
    const clock = new FakeClock("2024-05-01T02:59:59.000Z");
    const scheduler = testScheduler(database, {
      clock,
      jobs: { report: {} },
      recurring: {
        nightly: { job: "report", schedule: "0 3 * * *", timezone: "Europe/Berlin", queue: "reports", priority: 4 },
      },
    });
    await scheduler.prepare();
    await scheduler.step(clock.set("2024-05-02T01:00:00.000Z")); // 03:00 in Berlin (CEST)
    await firm.recurring.schedule("every-minute", { job: "report", schedule: "* * * * *" });
    const before = Date.now();
    const result = await runCli(["recurring", "--database-url", env.url]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^KEY\s+KIND\s+JOB\s+SCHEDULE\s+QUEUE\s+PRIORITY\s+NEXT RUN \(UTC\)\s+LAST RUN \(UTC\)$/);
    expect(lines[1]).toMatch(/^every-minute\s+dynamic\s+report\s+\* \* \* \* \*\s+-\s+-\s+\S+:00\.000Z\s+never$/);
    expect(lines[2]).toMatch(
      /^nightly\s+static\s+report\s+0 3 \* \* \* \(Europe\/Berlin\)\s+reports\s+4\s+\S+\s+2024-05-02T01:00:00\.000Z$/,
    );
    const json = JSON.parse((await runCli(["recurring", "--json", "--database-url", env.url])).stdout) as Record<
      string,
      unknown
    >[];
    const nightly = json.find((task) => task.key === "nightly")!;
    expect(nightly).toMatchObject({
      job: "report",
      timezone: "Europe/Berlin",
      static: true,
      lastRunAt: "2024-05-02T01:00:00.000Z",
    });
    // The next 03:00 in Berlin after now, whatever today is.
    const next = new Date(nightly.nextRunAt as string);
    expect(next.getTime()).toBeGreaterThan(before);
    expect(next.getTime() - before).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);
    expect(
      new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" }).format(next),
    ).toBe("03:00");
  });
});
