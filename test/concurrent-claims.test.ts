import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { describeEachDatabase } from "./support/harness.js";
import { spawnCli } from "./support/processes.js";

describeEachDatabase("no double claims", (env) => {
  it("concurrent claimers in one process never take the same job", async () => {
    const firm = env.firm();
    const job = firm.defineJob("record", async () => {});
    const ids = (await job.enqueueAll(Array.from({ length: 300 }, () => null))).map((result) => result.id);
    // Separate FirmQueue instances: separate pools on PostgreSQL and MySQL, so claims really race.
    const claimers = await Promise.all(
      Array.from({ length: 6 }, async (_, index) => {
        const database = await env.firm().database();
        const processId = await registerProcess(database.db, { kind: "Worker", name: `racer-${index}` }, new Date());
        return { database, processId };
      }),
    );
    const claimedBy = await Promise.all(
      claimers.map(async ({ database, processId }) => {
        const mine: number[] = [];
        for (;;) {
          const jobs = await claimJobs(database, new QueueSelector("*"), 7, processId);
          if (jobs.length === 0) return mine;
          mine.push(...jobs.map((row) => Number(row.id)));
        }
      }),
    );
    const all = claimedBy.flat();
    expect(all.length).toBe(300);
    expect(new Set(all).size).toBe(300);
    expect([...all].sort((a, b) => a - b)).toEqual(ids);
  });

  it("several worker processes run every job exactly once", async () => {
    const firm = env.firm();
    const job = firm.defineJob("record", async () => {});
    const ids = (await job.enqueueAll(Array.from({ length: 400 }, () => ({ sleepMs: 2 })))).map((result) => result.id);
    const dir = await mkdtemp(join(tmpdir(), "firm-queue-race-"));
    try {
      const log = join(dir, "runs.log");
      const workers = Array.from({ length: 4 }, () =>
        spawnCli(["drain", "--require", "test/fixtures/greeter.ts", "--concurrency", "3"], {
          FIRM_QUEUE_DATABASE_URL: env.url,
          FIXTURE_LOG: log,
        }),
      );
      const results = await Promise.all(workers.map((worker) => worker.finished));
      for (const result of results) expect(result.code, result.stderr).toBe(0);
      const runs = (await readFile(log, "utf8"))
        .trim()
        .split("\n")
        .map((line) => line.split(" "));
      const ranIds = runs.map(([id]) => Number(id));
      expect(ranIds.length).toBe(400);
      expect(new Set(ranIds).size).toBe(400);
      expect([...ranIds].sort((a, b) => a - b)).toEqual(ids);
      // The processes really overlapped: more than one of them ran jobs.
      expect(new Set(runs.map(([, , pid]) => pid)).size).toBeGreaterThan(1);
      for (const id of [ids[0]!, ids[399]!])
        expect(await firm.getJob(id)).toMatchObject({ state: "finished", attempts: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
