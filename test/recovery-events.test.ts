import { expect, it } from "vitest";
import { ProcessMissingError, ProcessPrunedError, type JobEventMap, type JobEventName } from "../src/index.js";
import type { FirmQueue } from "../src/firm-queue.js";
import { describeEachDatabase, enqueued, waitFor } from "./support/harness.js";
import { claimForProcess, insertForeignProcess } from "./support/foreign-claims.js";
import { parseScrape } from "./support/prometheus-text.js";

/*
 * Crash recovery fails the attempts of a process that died holding claims. The job events (and
 * the metrics counted from them) tell of those attempts too, in the process that recovered them,
 * marked `recovered`, with no run time observed.
 */
describeEachDatabase("job events from crash recovery", (env) => {
  const insertProcess = async (heartbeatAgoMs: number) => insertForeignProcess(await env.db(), heartbeatAgoMs);
  const claimFor = async (jobId: number, processId: number) => claimForProcess(await env.db(), jobId, processId);

  /** Every event of these names `firm` tells, in order. */
  function record<Name extends JobEventName>(firm: FirmQueue, names: readonly Name[]) {
    const seen: { name: Name; event: JobEventMap[Name] }[] = [];
    for (const name of names) firm.events.on(name, (event) => void seen.push({ name, event }));
    return seen;
  }

  it("a pruned process's attempts are told as job.retrying and job.failed, recovered, and counted without a run time", async () => {
    const firm = env.firm();
    firm.metrics.enable();
    firm.defineJob("flaky", async () => undefined, { queue: "work", retry: { attempts: 3, backoff: 0 } });
    firm.defineJob("once", async () => undefined, { queue: "work" });
    const retried = await enqueued(firm.enqueue("flaky", null));
    const failed = await enqueued(firm.enqueue("once", null));
    const dead = await insertProcess(60_000);
    await claimFor(retried, dead);
    await claimFor(failed, dead);
    const seen = record(firm, ["job.retrying", "job.failed", "job.abandoned", "job.cancelled"]);
    const supervisor = await firm.start({
      workers: [{ queues: "nothing-here" }],
      dispatchers: [],
      processHeartbeatInterval: 200,
      processAliveThreshold: 5000,
    });
    try {
      await waitFor(() => seen.length >= 2, 20_000, "both recovered attempts told");
      expect(seen.map(({ name, event }) => [name, event.jobId])).toEqual(
        expect.arrayContaining([
          ["job.retrying", retried],
          ["job.failed", failed],
        ]),
      );
      expect(seen).toHaveLength(2);
      for (const { event } of seen) {
        expect(event).toMatchObject({ queue: "work", attempt: 1, processId: dead, durationMs: 0, recovered: true });
        expect((event as { error: unknown }).error).toBeInstanceOf(ProcessPrunedError);
      }
      expect(seen.find(({ name }) => name === "job.retrying")!.event).toMatchObject({ job: "flaky", maxAttempts: 3 });
      expect(seen.find(({ name }) => name === "job.failed")!.event).toMatchObject({ job: "once", maxAttempts: 1 });

      const scrape = parseScrape(await firm.metrics.text());
      expect(scrape.value("firm_queue_jobs_retried_total", { queue: "work", job: "flaky" })).toBe(1);
      expect(scrape.value("firm_queue_jobs_failed_total", { queue: "work", job: "once" })).toBe(1);
      // Nobody saw how long those attempts ran: no run time was observed for them.
      expect(scrape.value("firm_queue_job_run_seconds_count", { queue: "work", job: "once" }) ?? 0).toBe(0);
    } finally {
      await supervisor.stop();
    }
  });

  it("claims left by a process whose row is gone are told at boot, with ProcessMissingError", async () => {
    const firm = env.firm();
    firm.defineJob("orphan", async () => undefined);
    const id = await enqueued(firm.enqueue("orphan", null));
    await claimFor(id, 424_242);
    const seen = record(firm, ["job.failed"]);
    const supervisor = await firm.start({ workers: [{ queues: "nothing-here" }], dispatchers: [] });
    try {
      expect(seen).toHaveLength(1);
      expect(seen[0]!.event).toMatchObject({ jobId: id, job: "orphan", processId: 424_242, recovered: true });
      expect(seen[0]!.event.error).toBeInstanceOf(ProcessMissingError);
    } finally {
      await supervisor.stop();
    }
  });

  it("a job whose cancel was asked while its dead process held it is told as job.cancelled, started", async () => {
    const firm = env.firm();
    firm.defineJob("long", async () => undefined, { retry: { attempts: 5, backoff: 0 } });
    const id = await enqueued(firm.enqueue("long", null));
    const dead = await insertProcess(60_000);
    await claimFor(id, dead);
    await firm.jobs.cancel(id);
    const seen = record(firm, ["job.cancelled", "job.retrying", "job.failed"]);
    const supervisor = await firm.start({
      workers: [{ queues: "nothing-here" }],
      dispatchers: [],
      processHeartbeatInterval: 200,
      processAliveThreshold: 5000,
    });
    try {
      await waitFor(() => seen.length >= 1, 20_000, "the recovered cancel told");
      expect(seen).toEqual([
        {
          name: "job.cancelled",
          event: { jobId: id, job: "long", queue: "default", attempt: 1, processId: dead, started: true },
        },
      ]);
    } finally {
      await supervisor.stop();
    }
  });
});
