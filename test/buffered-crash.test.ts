import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnNode } from "./support/processes.js";
import { toDate } from "../src/database/schema.js";

describeEachDatabase("a crash with jobs claimed ahead", (env) => {
  // Crash recovery used to count an attempt for every claim of the dead worker, those waiting in
  // its buffer included: with one attempt each, jobs whose handler never ran ended failed.
  it("costs an attempt only to the jobs whose handler had started; the others run as if nothing happened", async () => {
    const firm = env.firm();
    const probe = firm.defineJob("crash-probe", async () => undefined, { retry: { attempts: 1 } });
    const ids = (await probe.enqueueAll([...Array(202)].map(() => ({})))).map((result) => Number(result.id));
    const log = join(mkdtempSync(join(tmpdir(), "firm-queue-crash-")), "runs.log");
    const worker = spawnNode(["test/fixtures/buffered-crash.mjs", env.url, log]);
    const db = await env.db();
    const started = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
    await waitFor(
      async () => started().length === 2 && (await countRows(db, "firm_queue_claimed_executions")) === 202,
      30_000,
      "two jobs running and 200 claimed ahead",
    );
    worker.child.kill("SIGKILL");
    await worker.finished;
    const running = started().map((line) => Number(line.split(" ")[1]));

    // A supervisor here prunes the dead worker and runs what it left.
    const supervisor = await firm.start({
      workers: [{ concurrency: 8, pollingInterval: 50 }],
      processHeartbeatInterval: 200,
      processAliveThreshold: 1000,
    });
    try {
      await waitFor(
        async () => (await countRows(db, "firm_queue_failed_executions")) + (await finishedCount(ids)) === ids.length,
        60_000,
        "every job failed or finished",
      );
    } finally {
      await supervisor.stop();
    }
    const failed = (await db.selectFrom("firm_queue_failed_executions").select("job_id").execute()).map((row) =>
      Number(row.job_id),
    );
    expect(failed.sort()).toEqual(running.sort());
    for (const id of failed)
      expect(await firm.getJob(id)).toMatchObject({ attempts: 1, error: { name: "ProcessPrunedError" } });
    expect(await finishedCount(ids)).toBe(ids.length - 2);
    const rows = await db.selectFrom("firm_queue_jobs").select(["id", "attempts"]).where("id", "in", ids).execute();
    expect(rows.filter((row) => !failed.includes(Number(row.id))).every((row) => row.attempts === 1)).toBe(true);
  }, 120_000);

  // The claim marks the jobs it hands to free slots; one that starts later, from the buffer, is
  // marked in the write that records the finish which freed its slot (no commit of its own).
  it("marks a job that starts from the buffer in the same write as the finish before it", async () => {
    const firm = env.firm();
    const started: number[] = [];
    const job = firm.defineJob("mark-probe", async ({ hold }: { hold: boolean }, context) => {
      started.push(context.jobId);
      if (hold) await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
    });
    const [first, second, third] = (await job.enqueueAll([{ hold: false }, { hold: true }, { hold: false }])).map(
      (result) => Number(result.id),
    ) as [number, number, number];
    const db = await env.db();
    const claimOf = (jobId: number) =>
      db
        .selectFrom("firm_queue_claimed_executions")
        .select("started_at")
        .where("job_id", "=", jobId)
        .executeTakeFirst();
    const supervisor = await firm.start({ workers: [{ concurrency: 1, prefetch: 5, pollingInterval: 50 }] });
    try {
      await waitFor(
        async () => started.includes(second) && (await claimOf(second))?.started_at != null,
        10_000,
        "the held job started and marked",
      );
      const finished = await db
        .selectFrom("firm_queue_jobs")
        .select("finished_at")
        .where("id", "=", first)
        .executeTakeFirst();
      // One statement's clock: the finish of the first job and the mark of the second.
      expect(toDate((await claimOf(second))!.started_at!).getTime()).toBe(toDate(finished!.finished_at!).getTime());
      // The third waits in the buffer, unmarked: a crash now would put it back in line as it was.
      expect(await claimOf(third)).toEqual({ started_at: null });
      expect(started).toEqual([first, second]);
    } finally {
      await supervisor.stop();
    }
  });

  async function finishedCount(ids: readonly number[]): Promise<number> {
    const db = await env.db();
    const rows = await db
      .selectFrom("firm_queue_jobs")
      .select("id")
      .where("id", "in", ids as number[])
      .where("finished_at", "is not", null)
      .execute();
    return rows.length;
  }
});
