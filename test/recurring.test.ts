import { expect, it } from "vitest";
import { silentLogger } from "../src/index.js";
import { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRegistry } from "../src/definitions/job-registry.js";
import { enqueueJobs } from "../src/lifecycle/enqueue.js";
import { resolveJobOptions } from "../src/definitions/job-definition.js";
import { insertRecurringExecution, isDuplicateTick } from "../src/models/recurring-execution.js";
import { syncStaticRecurringTasks } from "../src/models/recurring-task.js";
import { resolveRecurringTasks } from "../src/definitions/recurring-task.js";
import { enqueueRecurringTick, type EnqueueJobs } from "../src/roles/recurring-tick.js";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { FakeClock, capturingLogger, recurringJobs, testScheduler } from "./support/recurring.js";

const TASK = resolveRecurringTasks({ every: { job: "tick", schedule: "* * * * * *", args: { n: 1 } } }, ["tick"])[0]!;
const DEFAULTS = resolveJobOptions("tick", {});
/** Policies of an instance that defines no jobs: no concurrency limits, no retries. */
const POLICIES = new JobPolicies(new JobRegistry(), silentLogger);
const T = new Date("2024-05-01T10:00:00.000Z");

describeEachDatabase("recurring ticks", (env) => {
  /** The database, with TASK in the tasks table as a scheduler's start leaves it. */
  async function withTask() {
    const database = await env.firm().database();
    await database.writeTransaction((trx) => syncStaticRecurringTasks(trx, [TASK], new Date()));
    return database;
  }

  async function lastRunAt(): Promise<string | null> {
    const row = await (await env.db())
      .selectFrom("firm_queue_recurring_tasks")
      .select("last_run_at")
      .where("key", "=", TASK.key)
      .executeTakeFirstOrThrow();
    return row.last_run_at === null ? null : new Date(row.last_run_at).toISOString();
  }

  it("enqueue one ready job with run_at = scheduled_at = the tick, once however often they are tried", async () => {
    const database = await withTask();
    const first = await enqueueRecurringTick(database, POLICIES, TASK, T, DEFAULTS);
    expect(first.kind).toBe("enqueued");
    expect(await enqueueRecurringTick(database, POLICIES, TASK, T, DEFAULTS)).toEqual({ kind: "duplicate" });
    const rows = await recurringJobs(database.db);
    expect(rows).toEqual([
      {
        task: "every",
        runAt: T.toISOString(),
        jobId: (first as { jobId: number }).jobId,
        job: "tick",
        queue: "default",
        priority: 0,
        scheduledAt: T.toISOString(),
        arguments: '{"n":1}',
      },
    ]);
    expect(await countRows(database.db, "firm_queue_ready_executions")).toBe(1);
    expect(await lastRunAt()).toBe(T.toISOString());
  });

  it("a tick stays done after its job is deleted (finished jobs are not kept), and so do earlier ones", async () => {
    const database = await withTask();
    const first = await enqueueRecurringTick(database, POLICIES, TASK, T, DEFAULTS);
    // Deleting the job cascades to its execution row: the unique index alone would forget the tick.
    await database.db
      .deleteFrom("firm_queue_jobs")
      .where("id", "=", (first as { jobId: number }).jobId)
      .execute();
    expect(await countRows(database.db, "firm_queue_recurring_executions")).toBe(0);
    expect(await enqueueRecurringTick(database, POLICIES, TASK, T, DEFAULTS)).toEqual({ kind: "duplicate" });
    expect(await enqueueRecurringTick(database, POLICIES, TASK, new Date(T.getTime() - 1000), DEFAULTS)).toEqual({
      kind: "duplicate",
    });
    expect(await countRows(database.db, "firm_queue_jobs")).toBe(0);
    expect((await enqueueRecurringTick(database, POLICIES, TASK, new Date(T.getTime() + 1000), DEFAULTS)).kind).toBe(
      "enqueued",
    );
  });

  it("a task no longer in the table fires nothing", async () => {
    const database = await env.firm().database();
    expect(await enqueueRecurringTick(database, POLICIES, TASK, T, DEFAULTS)).toEqual({ kind: "removed" });
    expect(await countRows(database.db, "firm_queue_jobs")).toBe(0);
  });

  it("a scheduler that loses the race on the unique (task_key, run_at) rolls back everything it wrote", async () => {
    const database = await withTask();
    // The task's mark cannot tell (say the task row was recreated): an execution row for the
    // tick appears before ours, our insert hits the unique index (on PostgreSQL that aborts the
    // transaction) and all of it rolls back, the mark included.
    const racing: EnqueueJobs = async (db, policies, requests, trx) => {
      const [rival] = await enqueueJobs(db, policies, requests, trx);
      await insertRecurringExecution(trx!, { jobId: rival!.id!, taskKey: TASK.key, runAt: T }, new Date());
      return enqueueJobs(db, policies, requests, trx);
    };
    expect(await enqueueRecurringTick(database, POLICIES, TASK, T, DEFAULTS, racing)).toEqual({ kind: "duplicate" });
    expect(await countRows(database.db, "firm_queue_jobs")).toBe(0);
    expect(await countRows(database.db, "firm_queue_recurring_executions")).toBe(0);
    expect(await lastRunAt()).toBeNull();
  });

  it("other unique violations are errors, not duplicates", async () => {
    const database = await withTask();
    const earlier = await enqueueRecurringTick(database, POLICIES, TASK, new Date(T.getTime() - 1000), DEFAULTS);
    // A broken enqueue handing back a job that already has an execution row: unique (job_id).
    const broken: EnqueueJobs = async () => [{ status: "created", id: (earlier as { jobId: number }).jobId }];
    const failure = await enqueueRecurringTick(database, POLICIES, TASK, T, DEFAULTS, broken).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(isDuplicateTick(database.dialect, failure)).toBe(false);
    expect(await countRows(database.db, "firm_queue_recurring_executions")).toBe(1);
  });

  it("a tick whose job the concurrency controls discard creates no job and no execution row", async () => {
    const database = await withTask();
    // Stands in for enqueueJobs once it applies concurrency controls: a discarded job is null.
    const discarding: EnqueueJobs = async () => [{ status: "dropped", id: null }];
    expect(await enqueueRecurringTick(database, POLICIES, TASK, T, DEFAULTS, discarding)).toEqual({
      kind: "discarded",
    });
    expect(await countRows(database.db, "firm_queue_jobs")).toBe(0);
    expect(await countRows(database.db, "firm_queue_recurring_executions")).toBe(0);
    // The tick has fired: another scheduler does not try it again (and maybe find the slot free).
    expect(await lastRunAt()).toBe(T.toISOString());
    expect(await enqueueRecurringTick(database, POLICIES, TASK, T, DEFAULTS)).toEqual({ kind: "duplicate" });
    expect(await countRows(database.db, "firm_queue_jobs")).toBe(0);
  });

  it("a recurring job whose concurrency slot is taken is discarded: no job, no execution row", async () => {
    const database = await env.firm().database();
    const clock = new FakeClock("2024-05-01T00:00:00.500Z");
    const limited = { concurrency: { key: () => "report", to: 1, onConflict: "discard" as const } };
    const scheduler = testScheduler(database, {
      clock,
      jobs: { report: limited },
      recurring: { nightly: { job: "report", schedule: "* * * * * *" } },
    });
    await scheduler.prepare();
    // Another job of the same key holds the only slot.
    const holder = env.firm();
    const report = holder.defineJob("report", async () => {}, limited);
    const held = (await report.enqueue(null)).id;
    expect(held).not.toBeNull();
    await scheduler.step(clock.set("2024-05-01T00:00:01.000Z"));
    expect(await countRows(database.db, "firm_queue_jobs")).toBe(1);
    expect(await countRows(database.db, "firm_queue_recurring_executions")).toBe(0);
    // Once the slot is free, the next tick runs.
    await holder.drain();
    await scheduler.step(clock.set("2024-05-01T00:00:02.000Z"));
    const executions = await database.db
      .selectFrom("firm_queue_recurring_executions")
      .select(["task_key", "run_at"])
      .execute();
    expect(executions.map((row) => [row.task_key, new Date(row.run_at).toISOString()])).toEqual([
      ["nightly", "2024-05-01T00:00:02.000Z"],
    ]);
  });
});

describeEachDatabase("scheduler", (env) => {
  it("enqueues tick T at T (not one period late), with run_at = T, and sleeps until the next tick", async () => {
    const database = await env.firm().database();
    const clock = new FakeClock("2024-05-01T00:59:59.000Z");
    const scheduler = testScheduler(database, { clock, recurring: { hourly: { job: "tick", schedule: "0 * * * *" } } });
    await scheduler.prepare();
    expect(await scheduler.step(clock.now)).toBe(1000);
    expect(await recurringJobs(database.db)).toEqual([]);
    expect(await scheduler.step(clock.set("2024-05-01T01:00:00.000Z"))).toBe(3_600_000);
    expect((await recurringJobs(database.db)).map((row) => row.runAt)).toEqual(["2024-05-01T01:00:00.000Z"]);
    // Woken early (a dynamic change, say): nothing is due, nothing is written.
    expect(await scheduler.step(clock.set("2024-05-01T01:30:00.000Z"))).toBe(1_800_000);
    expect(await countRows(database.db, "firm_queue_jobs")).toBe(1);
  });

  it("uses the task's queue and priority, else the job definition's", async () => {
    const database = await env.firm().database();
    const clock = new FakeClock("2024-05-01T00:00:00.500Z");
    const scheduler = testScheduler(database, {
      clock,
      jobs: { report: { queue: "default-reports", priority: 7 } },
      recurring: {
        custom: { job: "report", schedule: "* * * * * *", queue: "reports", priority: 4, args: { kind: "daily" } },
        plain: { job: "report", schedule: "* * * * * *" },
      },
    });
    await scheduler.prepare();
    await scheduler.step(clock.set("2024-05-01T00:00:01.000Z"));
    const rows = await recurringJobs(database.db);
    expect(
      rows.map(({ task, job, queue, priority, runAt, arguments: args }) => ({
        task,
        job,
        queue,
        priority,
        runAt,
        args,
      })),
    ).toEqual([
      {
        task: "custom",
        job: "report",
        queue: "reports",
        priority: 4,
        runAt: "2024-05-01T00:00:01.000Z",
        args: '{"kind":"daily"}',
      },
      {
        task: "plain",
        job: "report",
        queue: "default-reports",
        priority: 7,
        runAt: "2024-05-01T00:00:01.000Z",
        args: "null",
      },
    ]);
  });

  it("does not catch up ticks from before it started, but owes every tick while it runs", async () => {
    const database = await env.firm().database();
    const clock = new FakeClock("2024-05-01T05:30:00.000Z");
    const scheduler = testScheduler(database, {
      clock,
      recurring: { hourly: { job: "tick", schedule: "0 * * * *" }, second: { job: "tick", schedule: "* * * * * *" } },
    });
    await scheduler.prepare();
    await scheduler.step(clock.now);
    expect(await recurringJobs(database.db)).toEqual([]);
    // Three seconds late (a slow database, a busy event loop): each owed tick, each its own run_at.
    await scheduler.step(clock.set("2024-05-01T05:30:03.200Z"));
    expect((await recurringJobs(database.db)).map((row) => `${row.task} ${row.runAt}`)).toEqual([
      "second 2024-05-01T05:30:01.000Z",
      "second 2024-05-01T05:30:02.000Z",
      "second 2024-05-01T05:30:03.000Z",
    ]);
  });

  it("after a suspension, enqueues the tick it waited for and skips the ones missed meanwhile", async () => {
    const database = await env.firm().database();
    const clock = new FakeClock("2024-05-01T01:30:00.000Z");
    const logger = capturingLogger();
    const scheduler = testScheduler(database, {
      clock,
      logger,
      recurring: { hourly: { job: "tick", schedule: "0 * * * *" } },
    });
    await scheduler.prepare();
    await scheduler.step(clock.now); // plans to wake at 02:00
    await scheduler.step(clock.set("2024-05-01T04:30:00.000Z"));
    expect((await recurringJobs(database.db)).map((row) => row.runAt)).toEqual(["2024-05-01T02:00:00.000Z"]);
    expect(logger.lines.some((line) => line.level === "warn" && line.message.startsWith("scheduler woke late"))).toBe(
      true,
    );
    await scheduler.step(clock.set("2024-05-01T05:00:00.000Z"));
    expect((await recurringJobs(database.db)).map((row) => row.runAt)).toEqual([
      "2024-05-01T02:00:00.000Z",
      "2024-05-01T05:00:00.000Z",
    ]);
  });

  it("retries a failed tick a second later, with its own run_at, while its other tasks go on", async () => {
    const database = await env.firm().database();
    const clock = new FakeClock("2024-05-01T00:00:00.500Z");
    const logger = capturingLogger();
    let outage = true;
    const flaky: EnqueueJobs = async (db, policies, requests, trx) => {
      if (outage && requests[0]!.name === "fragile") throw new Error("connection lost");
      return enqueueJobs(db, policies, requests, trx);
    };
    const scheduler = testScheduler(database, {
      clock,
      logger,
      enqueue: flaky,
      jobs: { fragile: {}, sturdy: {} },
      recurring: {
        fragile: { job: "fragile", schedule: "* * * * * *" },
        sturdy: { job: "sturdy", schedule: "* * * * * *" },
      },
    });
    await scheduler.prepare();
    // The fragile tick failed: it is retried after a second, not at once.
    expect(await scheduler.step(clock.set("2024-05-01T00:00:01.000Z"))).toBe(1000);
    expect((await recurringJobs(database.db)).map((row) => `${row.task} ${row.runAt}`)).toEqual([
      "sturdy 2024-05-01T00:00:01.000Z",
    ]);
    expect(
      logger.lines.filter((line) => line.level === "error").map((line) => [line.message, line.fields?.task]),
    ).toEqual([["recurring task tick failed; retrying", "fragile"]]);
    outage = false;
    await scheduler.step(clock.set("2024-05-01T00:00:02.000Z"));
    expect((await recurringJobs(database.db)).map((row) => `${row.task} ${row.runAt}`)).toEqual([
      "fragile 2024-05-01T00:00:01.000Z",
      "sturdy 2024-05-01T00:00:01.000Z",
      "fragile 2024-05-01T00:00:02.000Z",
      "sturdy 2024-05-01T00:00:02.000Z",
    ]);
  });

  it("ticks in the task's time zone", async () => {
    const database = await env.firm().database();
    const clock = new FakeClock("2024-03-30T12:00:00.000Z");
    const scheduler = testScheduler(database, {
      clock,
      recurring: { berlin: { job: "tick", schedule: "30 2 * * *", timezone: "Europe/Berlin" } },
    });
    await scheduler.prepare();
    // 2024-03-31 02:30 does not exist in Berlin (spring forward): the tick is at 03:00 CEST.
    expect(await scheduler.step(clock.now)).toBe(Date.parse("2024-03-31T01:00:00.000Z") - clock.now);
    await scheduler.step(clock.set("2024-03-31T01:00:00.000Z"));
    expect((await recurringJobs(database.db)).map((row) => row.runAt)).toEqual(["2024-03-31T01:00:00.000Z"]);
  });
});
