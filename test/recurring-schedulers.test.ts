import { expect, it } from "vitest";
import type { Spawned } from "./support/processes.js";
import { spawnNode } from "./support/processes.js";
import { describeEachDatabaseAtOnce, waitFor } from "./support/harness.js";
import { capturingLogger, recurringJobs } from "./support/recurring.js";

const EVERY_SECOND = { every: { job: "tick", schedule: "* * * * * *" } };

/**
 * How long the separate-process run lasts. The "done when" is a full minute per
 * database: FIRM_QUEUE_RECURRING_SOAK_SECONDS=60 runs that; the normal suite runs 10 s.
 */
const SOAK_SECONDS = Number(process.env.FIRM_QUEUE_RECURRING_SOAK_SECONDS ?? 10);

/** Whole seconds t with from < t <= to, as ISO strings. */
function secondsBetween(from: number, to: number): string[] {
  const out: string[] = [];
  for (let at = Math.floor(from / 1000) * 1000 + 1000; at <= to; at += 1000) out.push(new Date(at).toISOString());
  return out;
}

// The databases side by side: the tests here mostly wait out their windows on the clock.
describeEachDatabaseAtOnce("several schedulers", (env) => {
  /** Exactly one job per tick, each with run_at = scheduled_at = a whole second. */
  async function checkOneJobPerTick(windowStart: number, windowEnd: number): Promise<number> {
    const db = await env.db();
    const rows = await recurringJobs(db);
    const runAts = rows.map((row) => row.runAt);
    expect(new Set(runAts).size, "one execution per tick").toBe(runAts.length);
    for (const row of rows) {
      expect(row.runAt).toMatch(/\.000Z$/);
      expect(row.scheduledAt).toBe(row.runAt);
    }
    // Every job has its execution row: no job was enqueued without one, none twice.
    const jobs = await db.selectFrom("firm_queue_jobs").select("id").where("class_name", "=", "tick").execute();
    expect(jobs.length).toBe(rows.length);
    // Every second while all of them ran has its job (the last one may still be in flight).
    const expected = secondsBetween(windowStart, windowEnd - 1000);
    expect(
      expected.filter((at) => !runAts.includes(at)),
      "ticks missing while all schedulers ran",
    ).toEqual([]);
    return expected.length;
  }

  it("three schedulers in one process enqueue each tick exactly once, and the jobs run", async () => {
    const loggers = [capturingLogger(), capturingLogger(), capturingLogger()];
    const ran: number[] = [];
    const firms = loggers.map((logger) => {
      const firm = env.firm({ logger });
      firm.defineJob("tick", async (_args, context) => void ran.push(context.jobId));
      return firm;
    });
    const supervisors = await Promise.all(
      firms.map((firm, index) =>
        firm.start({ workers: index === 0 ? [{ pollingInterval: 50 }] : [], dispatchers: [], recurring: EVERY_SECOND }),
      ),
    );
    const windowStart = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 4500));
    const windowEnd = Date.now();
    await Promise.all(supervisors.map((supervisor) => supervisor.stop()));
    const ticks = await checkOneJobPerTick(windowStart, windowEnd);
    expect(ticks).toBeGreaterThanOrEqual(3);
    expect(ran.length).toBeGreaterThanOrEqual(ticks - 1);
    expect(new Set(ran).size).toBe(ran.length);
    const problems = loggers.flatMap((logger) =>
      logger.lines.filter((line) => line.level === "error" || line.level === "warn"),
    );
    expect(problems).toEqual([]);
    // Each scheduler logs the ticks it won: together exactly the jobs there are.
    const wins = loggers.map(
      (logger) => logger.lines.filter((line) => line.message === "recurring task enqueued").length,
    );
    expect(wins.reduce((sum, count) => sum + count, 0)).toBe((await recurringJobs(await env.db())).length);
  });

  it(`three scheduler processes produce exactly one job per second (${SOAK_SECONDS} s)`, {
    timeout: (SOAK_SECONDS + 60) * 1000,
  }, async () => {
    const processes: Spawned[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        processes.push(
          spawnNode(["test/fixtures/scheduler-process.mjs"], {
            FIRM_QUEUE_DATABASE_URL: env.url,
            FIXTURE_RECURRING: JSON.stringify(EVERY_SECOND),
            FIXTURE_LOG_LEVEL: "debug",
          }),
        );
      }
      await waitFor(
        () => processes.every((child) => child.output().includes("scheduler started")),
        30_000,
        "three schedulers to start",
      );
      const windowStart = Date.now();
      await new Promise((resolve) => setTimeout(resolve, SOAK_SECONDS * 1000));
      const windowEnd = Date.now();
      for (const child of processes) child.child.kill("SIGTERM");
      const results = await Promise.all(processes.map((child) => child.finished));
      for (const result of results) {
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr.split("\n").filter((line) => / (WARN|ERROR) /.test(line))).toEqual([]);
      }
      const ticks = await checkOneJobPerTick(windowStart, windowEnd);
      expect(ticks).toBeGreaterThanOrEqual(SOAK_SECONDS - 1);
      // Each process logs the ticks it won: together exactly the jobs there are, none claimed twice.
      const wins = results.map(
        (result) => result.stderr.split("\n").filter((line) => line.includes("recurring task enqueued")).length,
      );
      const all = await recurringJobs(await env.db());
      expect(wins.reduce((sum, count) => sum + count, 0)).toBe(all.length);
      if (process.env.FIRM_QUEUE_RECURRING_SOAK_SECONDS) {
        console.log(
          `[soak ${env.dialect}] ${SOAK_SECONDS} s, 3 processes: ${ticks} whole seconds while all ran, each with exactly one job; ${all.length} jobs in all, ${new Set(all.map((row) => row.runAt)).size} distinct run_at; ticks won per process: ${wins.join(", ")}`,
        );
      }
    } finally {
      for (const child of processes) if (child.child.exitCode === null) child.child.kill("SIGKILL");
    }
  });
});
