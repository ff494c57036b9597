import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnCli } from "./support/processes.js";

describeEachDatabase("a job that kills its worker the moment it starts", (env) => {
  // A job started from the worker's buffer is marked started with the next finish batch, and
  // nobody waits for that mark: a crash before it commits puts the job back in line with no
  // attempt counted. A job that kills its worker at once would then loop forever, were it not for
  // the claim: on the restart it is first in line, the claim takes it for a free slot and marks it
  // started in the same statement, so each death from then on costs it an attempt.
  it("ends failed after its attempts: the start from the buffer costs none, the starts marked by the claim do", async () => {
    const log = join(mkdtempSync(join(tmpdir(), "firm-queue-killer-")), "runs.log");
    const firm = env.firm();
    const lead = await firm.enqueue("lead", {}, { undeclared: true });
    const killer = await firm.enqueue("killer", {}, { undeclared: true });
    const quick = await Promise.all([...Array(3)].map(() => firm.enqueue("quick", {}, { undeclared: true })));
    const host = spawnCli(
      [
        "start",
        "--require",
        "test/fixtures/killer-jobs.mjs",
        "--mode",
        "fork",
        "--concurrency",
        "1",
        "--prefetch",
        "8",
        "--polling-interval",
        "50ms",
      ],
      { FIRM_QUEUE_DATABASE_URL: env.url, FIRM_QUEUE_LOG_LEVEL: "info", KILLER_LOG: log },
    );
    const starts = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
    try {
      await waitFor(
        async () => {
          const states = await Promise.all(
            [killer, ...quick].map(async (job) => (await firm.getJob(Number(job.id)))?.state),
          );
          return states[0] === "failed" && states.slice(1).every((state) => state === "finished");
        },
        60_000,
        "the killer failed and the quick jobs behind it finished",
      );
    } finally {
      host.child.kill("SIGTERM");
      const exit = await host.finished;
      expect(exit.code, exit.stderr).toBe(0);
    }
    // Three starts, two attempts: the first start came from the buffer (behind the lead) and
    // killed the worker before its mark was written; the next two were claimed for the free slot.
    expect(starts()).toEqual([`start ${killer.id} 1`, `start ${killer.id} 1`, `start ${killer.id} 2`]);
    expect(await firm.getJob(Number(killer.id))).toMatchObject({
      state: "failed",
      attempts: 2,
      error: { name: "ProcessExitError" },
    });
    // The lead ran when the worker died (its finish was not written yet): that costs it an attempt.
    expect(await firm.getJob(Number(lead.id))).toMatchObject({
      state: "scheduled",
      attempts: 1,
      lastError: { name: "ProcessExitError" },
    });
    for (const job of quick) expect(await firm.getJob(Number(job.id))).toMatchObject({ attempts: 1 });
  }, 90_000);
});
