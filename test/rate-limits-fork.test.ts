import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { Db } from "../src/database/dialect.js";
import { toDate } from "../src/database/schema.js";
import { countRows, describeEachDatabaseAtOnce, waitFor } from "./support/harness.js";
import { defineRatedJobs, RATED_LIMIT, ratedLogFile, type RatedArgs } from "./fixtures/rated-jobs.js";
import { processRows } from "./support/supervised.js";
import { mostStartsInWindow, START_SKEW_MS } from "./support/rate-window.js";

// Each handler holds its slot longer than the period, so one process (4 slots) can start at most
// 4 jobs in any window: a window with more starts than that had both processes claiming in it.
// Holding the slot also keeps each claim's row in place long enough for the test to read it.
const SLOTS = 4;
const HOLD_MS = 1200;
/** Starting two child processes and their jobs' windows: slow on a busy machine. */
const PROCESS_TEST_TIMEOUT = 180_000;
const WAIT_MS = 80_000;

/**
 * The recorded start of each job, as the claim wrote it (its claim row's `started_at`, on the
 * database clock, the time the budget is charged at), read every few ms while the jobs run. The
 * handlers' own clock readings are not used for the window: a worker process's event loop can
 * start a handler hundreds of ms after its claim on a loaded machine, bunching starts claimed a
 * window apart.
 */
class ClaimWatch {
  readonly startedAt = new Map<number, number>();
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly db: Db) {
    this.loop = this.poll();
  }

  private async poll(): Promise<void> {
    while (this.running) {
      const rows = await this.db
        .selectFrom("firm_queue_claimed_executions")
        .select(["job_id", "started_at"])
        .where("started_at", "is not", null)
        .execute();
      for (const row of rows) {
        if (!this.startedAt.has(Number(row.job_id)))
          this.startedAt.set(Number(row.job_id), toDate(row.started_at!).getTime());
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Whether the claims of all `jobIds` were seen. */
  sawAll(jobIds: readonly number[]): boolean {
    return jobIds.every((id) => this.startedAt.has(id));
  }

  /** The start times of `jobIds` (every one of them must have been seen). */
  times(jobIds: readonly number[]): number[] {
    return jobIds.map((id) => {
      const at = this.startedAt.get(id);
      if (at === undefined) throw new Error(`job ${id}'s claim was never seen`);
      return at;
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

// Where the fixture's processes log their starts, a file per database (ratedLogFile): the
// databases run side by side, and a child inherits the environment when it is forked.
const LOG_DIR = mkdtempSync(join(tmpdir(), "firm-queue-rated-"));
process.env.FIXTURE_LOG_DIR = LOG_DIR;

// The databases side by side: the tests wait on rate windows and slots held 1.2 s.
describeEachDatabaseAtOnce("rate limits in fork mode: two worker processes", (env) => {
  let supervisor: { stop(): Promise<void> } | undefined;
  let builtFirm: { close(): Promise<void> } | undefined;
  let watch: ClaimWatch | undefined;
  afterEach(async () => {
    await watch?.stop();
    await supervisor?.stop();
    await builtFirm?.close();
    supervisor = undefined;
    builtFirm = undefined;
    watch = undefined;
    rmSync(ratedLogFile(LOG_DIR, env.url), { force: true });
  });

  /**
   * Start a fork-mode supervisor whose one worker runs two processes of SLOTS slots each; the
   * handlers' log lines ("start jobId key ms pid") as they come.
   */
  async function startTwoProcesses(): Promise<() => { key: string; pid: number }[]> {
    const log = ratedLogFile(LOG_DIR, env.url);
    watch = new ClaimWatch(await env.db());
    // The supervisor from the built package, as an application runs it: its children start from
    // dist/ (from src/ each child would compile the whole source tree through jiti first, which
    // takes minutes on a busy machine). They import the job module as the application's would.
    const built = await import("firm-queue");
    const supervising = new built.FirmQueue({ databaseUrl: env.url, logLevel: "warn" });
    builtFirm = supervising;
    supervisor = await supervising.start({
      mode: "fork",
      require: ["test/fixtures/rated.ts"],
      workers: [{ queues: "*", processes: 2, concurrency: SLOTS, pollingInterval: 50 }],
      dispatchers: [],
      // Generous: on a loaded machine a child can miss a few heartbeats without being dead.
      processHeartbeatInterval: 1000,
      processAliveThreshold: 15_000,
    });
    // Both processes polling before any job comes, so they claim from the budgets together.
    await waitFor(
      async () => (await processRows(await env.db())).filter((row) => row.kind === "Worker").length === 2,
      WAIT_MS,
      "two worker processes registered",
    );
    return () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => {
              const [, , key, , pid] = line.split(" ");
              return { key: key!, pid: Number(pid) };
            })
        : [];
  }

  it(
    "a job's own budget: at most `limit` starts in any period across both processes, and the limit is reached",
    async () => {
      const firm = env.firm();
      // The test process only enqueues (the key function is needed for that); the children run them.
      const rated = defineRatedJobs(firm, async () => {});
      const handled = await startTwoProcesses();
      // Enqueued in one statement while both processes poll: they claim from the budget together.
      const results = await rated.enqueueAll(
        Array.from({ length: 15 }, (): RatedArgs => ({ key: "a", holdMs: HOLD_MS })),
      );
      const ids = results.map((result) => (result.status === "created" ? result.id : Number.NaN));
      await waitFor(() => handled().length === ids.length && watch!.sawAll(ids), WAIT_MS, `${ids.length} starts`);
      const times = watch!.times(ids);
      expect(mostStartsInWindow(times, RATED_LIMIT.period - START_SKEW_MS)).toBeLessThanOrEqual(RATED_LIMIT.limit);
      // Reached: some window holds `limit` starts, more than one process's slots allow, so both
      // processes claimed from the one budget within it.
      expect(RATED_LIMIT.limit).toBeGreaterThan(SLOTS);
      expect(mostStartsInWindow(times, RATED_LIMIT.period + START_SKEW_MS)).toBeGreaterThanOrEqual(RATED_LIMIT.limit);
      expect(new Set(handled().map((start) => start.pid)).size).toBeGreaterThanOrEqual(2);
      // 15 starts at 5 per second need two full windows past the first.
      expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(2 * RATED_LIMIT.period - START_SKEW_MS);
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    "a queue's budget: at most `limit` starts of the queue in any period across both processes; another queue runs freely",
    async () => {
      const firm = env.firm();
      const stamp = firm.defineJob("stamp", async (_args: RatedArgs) => {});
      // 5 a second of jobs holding their slot 1.2 s keep about 6 of the 8 slots busy: the budget is
      // offered freed slots first, so a higher limit would leave the other queue almost none.
      await firm.queues.setRateLimit("api", { limit: 5, period: "1s" });
      const handled = await startTwoProcesses();
      const results = await stamp.enqueueAll(
        Array.from({ length: 15 }, (): RatedArgs => ({ key: "api", holdMs: HOLD_MS })),
        { queue: "api" },
      );
      await stamp.enqueueAll(
        Array.from({ length: 6 }, (): RatedArgs => ({ key: "other" })),
        { queue: "other" },
      );
      const api = results.map((result) => (result.status === "created" ? result.id : Number.NaN));
      await waitFor(() => handled().length === 21 && watch!.sawAll(api), WAIT_MS, "21 starts");
      const times = watch!.times(api);
      expect(mostStartsInWindow(times, 1000 - START_SKEW_MS)).toBeLessThanOrEqual(5);
      expect(mostStartsInWindow(times, 1000 + START_SKEW_MS)).toBeGreaterThan(SLOTS);
      const keys = handled().map((start) => start.key);
      expect(
        new Set(
          handled()
            .filter((start) => start.key === "api")
            .map((start) => start.pid),
        ).size,
      ).toBeGreaterThanOrEqual(2);
      expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(2000 - START_SKEW_MS);
      // The unlimited queue did not wait for api's backlog to drain: its jobs all started before
      // api's last (the handlers' log is in the order they started). They may wait for slots: a
      // worker offers a free slot to a budget with room before its buffered jobs.
      expect(keys.lastIndexOf("other")).toBeLessThan(keys.lastIndexOf("api"));
      expect(await countRows(await env.db(), "firm_queue_ready_executions")).toBe(0);
    },
    PROCESS_TEST_TIMEOUT,
  );
});
