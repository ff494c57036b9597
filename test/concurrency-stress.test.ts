import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { spawnCli, type Spawned } from "./support/processes.js";
import { LIMITED_JOBS, defineLimitedJobs, type LimitedArgs } from "./fixtures/limited-jobs.js";

const TOTAL = 400;
const WORKERS = 4;

interface Spec {
  readonly name: string;
  readonly args: LimitedArgs;
  readonly priority: number;
  readonly wait?: number;
}

/** A fixed mix over five keys: two one-at-a-time keys, two two-at-a-time keys, one group shared by two names. */
function specs(): Spec[] {
  // xorshift32: the same mix on every run.
  let seed = 0x9e3779b9;
  const random = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  return Array.from({ length: TOTAL }, (_, index) => {
    const kind = index % 4;
    const name = kind === 0 ? "serial" : kind === 1 ? "pair" : random(2) === 0 ? "shared-a" : "shared-b";
    const key = name.startsWith("shared") ? "x" : `${name[0]}${random(2) + 1}`;
    const spec: Spec = { name, args: { key, sleepMs: 1 + random(6) }, priority: random(4) };
    // Some go through the dispatcher: scheduled now, checked against the limit when due.
    return random(10) === 0 ? { ...spec, wait: 100 + random(500) } : spec;
  });
}

describeEachDatabase("concurrency limits under load", (env) => {
  it("several worker processes never run more than `to` jobs of one key at once, and run every job exactly once", async () => {
    const firm = env.firm();
    defineLimitedJobs(firm, async () => {});
    const all = specs();
    const enqueue = async (batch: readonly Spec[]) =>
      Promise.all(
        batch.map((spec) =>
          firm.enqueue(spec.name, spec.args, { priority: spec.priority, ...(spec.wait ? { wait: spec.wait } : {}) }),
        ),
      );
    const ids: number[] = [];
    const enqueueInChunks = async (from: number, to: number) => {
      for (let start = from; start < to; start += 10) {
        for (const { id } of await enqueue(all.slice(start, Math.min(start + 10, to)))) ids.push(id!);
      }
    };
    const dir = await mkdtemp(join(tmpdir(), "firm-queue-limits-"));
    const log = join(dir, "runs.log");
    let workers: Spawned[] = [];
    try {
      await enqueueInChunks(0, TOTAL / 2);
      workers = Array.from({ length: WORKERS }, () =>
        spawnCli(
          ["start", "--require", "test/fixtures/limited.ts", "--concurrency", "4", "--polling-interval", "10ms"],
          {
            FIRM_QUEUE_DATABASE_URL: env.url,
            FIXTURE_LOG: log,
          },
        ),
      );
      // The rest race with the workers: enqueues against releases and promotions.
      await enqueueInChunks(TOTAL / 2, TOTAL);
      expect(new Set(ids).size).toBe(TOTAL);
      const db = await env.db();
      const deadline = Date.now() + 150_000;
      for (;;) {
        const finished = await db
          .selectFrom("firm_queue_jobs")
          .select((eb) => eb.fn.countAll<number>().as("count"))
          .where("finished_at", "is not", null)
          .executeTakeFirstOrThrow();
        if (Number(finished.count) === TOTAL) break;
        const exited = workers.find((worker) => worker.child.exitCode !== null);
        if (exited) throw new Error(`a worker exited early:\n${exited.output()}`);
        if (Date.now() > deadline)
          throw new Error(
            `only ${finished.count} of ${TOTAL} jobs finished; worker output:\n${workers.map((w) => w.output()).join("\n")}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      for (const worker of workers) worker.child.kill("SIGTERM");
      for (const result of await Promise.all(workers.map((worker) => worker.finished)))
        expect(result.code, result.stderr).toBe(0);

      const events = (await readFile(log, "utf8"))
        .trim()
        .split("\n")
        .map((line) => line.split(" "));
      const limitOf = new Map(LIMITED_JOBS.map((job) => [job.group, job.to]));
      const running = new Map<string, number>();
      const most = new Map<string, number>();
      const started = new Map<number, number>();
      const ended = new Map<number, number>();
      for (const [event, id, key, limit] of events) {
        expect(Number(limit)).toBe(limitOf.get(key!.split("/")[0]!));
        const now = (running.get(key!) ?? 0) + (event === "start" ? 1 : -1);
        running.set(key!, now);
        most.set(key!, Math.max(most.get(key!) ?? 0, now));
        // File order is a happens-before order: more running than the limit is a real overlap.
        expect(now, `jobs of ${key} running at once`).toBeLessThanOrEqual(Number(limit));
        const seen = event === "start" ? started : ended;
        seen.set(Number(id), (seen.get(Number(id)) ?? 0) + 1);
        if (event === "end") expect(started.get(Number(id)), `job ${id} ended before it started`).toBe(1);
      }
      // Every job ran exactly once, start and end.
      expect([...started.keys()].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
      expect([...started.values()].every((count) => count === 1)).toBe(true);
      expect([...ended.keys()].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
      expect([...ended.values()].every((count) => count === 1)).toBe(true);
      // The limit was reached, not merely respected by running everything one by one.
      expect(Math.max(most.get("pair/p1") ?? 0, most.get("pair/p2") ?? 0)).toBe(2);
      expect(new Set(events.map((event) => event[4])).size).toBeGreaterThan(1);
      // Nothing left anywhere, and every slot was given back exactly once.
      for (const table of [
        "firm_queue_ready_executions",
        "firm_queue_blocked_executions",
        "firm_queue_claimed_executions",
        "firm_queue_scheduled_executions",
        "firm_queue_failed_executions",
      ] as const) {
        expect(await countRows(db, table), table).toBe(0);
      }
      const semaphores = await db
        .selectFrom("firm_queue_semaphores")
        .select(["key", "value", "expires_at"])
        .orderBy("key")
        .execute();
      expect(semaphores.map((row) => [row.key, row.value])).toEqual(
        ["pair/p1", "pair/p2", "serial/s1", "serial/s2", "shared/x"].map((key) => [
          key,
          limitOf.get(key.split("/")[0]!),
        ]),
      );
      for (const row of semaphores) expect(new Date(row.expires_at).getTime()).toBeGreaterThan(Date.now());
    } finally {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  }, 200_000);
});
