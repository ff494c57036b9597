import { expect, it } from "vitest";
import { JobNotFailedError, JobNotFoundError, JobRunningError, type FirmQueue } from "../src/index.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { countRows, describeEachDatabase } from "./support/harness.js";

/** A FirmQueue whose "breaks" job fails while `broken.value` is true, and counts its runs. */
function brittle(firm: FirmQueue) {
  const broken = { value: true, runs: 0 };
  const job = firm.defineJob("breaks", async (args: { n: number }) => {
    broken.runs++;
    if (broken.value) throw new Error(`broken ${args.n}`);
  });
  const other = firm.defineJob("other", async () => {
    throw new Error("other broke");
  });
  return { broken, job, other };
}

describeEachDatabase("failed jobs", (env) => {
  it("list shows each failed job with its error, filtered and paged; count agrees", async () => {
    const firm = env.firm();
    const { job, other } = brittle(firm);
    const ids = (await job.enqueueAll([{ n: 1 }, { n: 2 }, { n: 3 }])).map((result) => result.id);
    const otherId = (await other.enqueue(null, { queue: "elsewhere" })).id;
    await firm.drain();
    await job.enqueue({ n: 4 }); // ready, not failed: never listed
    expect(await firm.failedJobs.count()).toBe(4);
    const all = await firm.failedJobs.list();
    expect(all.map((failed) => failed.id)).toEqual([...ids, otherId]);
    const first = all[0]!;
    expect(first).toMatchObject({
      id: ids[0],
      name: "breaks",
      queue: "default",
      attempts: 1,
      arguments: { n: 1 },
      error: { name: "Error", message: "broken 1" },
    });
    expect(first.failedAt).toBeInstanceOf(Date);
    expect(first.error.stack).toContain("failed-jobs.test.ts");
    expect((await firm.failedJobs.list({ name: "other" })).map((failed) => failed.id)).toEqual([otherId]);
    expect((await firm.failedJobs.list({ queue: "elsewhere" })).map((failed) => failed.id)).toEqual([otherId]);
    expect(await firm.failedJobs.count({ name: "breaks" })).toBe(3);
    expect(await firm.failedJobs.count({ name: "breaks", queue: "elsewhere" })).toBe(0);
    const page1 = await firm.failedJobs.list({ limit: 2 });
    const page2 = await firm.failedJobs.list({ limit: 2, afterId: page1[1]!.id });
    expect([...page1, ...page2].map((failed) => failed.id)).toEqual(all.map((failed) => failed.id));
    await expect(firm.failedJobs.list({ limit: 0 })).rejects.toThrow("limit must be a whole number");
    await expect(firm.failedJobs.list({ nmae: "x" } as never)).rejects.toThrow('Unknown failedJobs.list option "nmae"');
  });

  it("retry sends a failed job back through dispatch with attempts reset; it runs again", async () => {
    const firm = env.firm();
    const { broken, job } = brittle(firm);
    const id = (await job.enqueue({ n: 1 })).id;
    await firm.drain();
    expect(await firm.getJob(id)).toMatchObject({ state: "failed", attempts: 1 });
    broken.value = false;
    expect(await firm.failedJobs.retry(id)).toBe(1);
    const retried = await firm.getJob(id);
    expect(retried).toMatchObject({ state: "ready", attempts: 0, lastError: { message: "broken 1" } });
    expect(retried?.error).toBeUndefined();
    expect(await countRows(await env.db(), "firm_queue_failed_executions")).toBe(0);
    await firm.drain();
    expect(broken.runs).toBe(2);
    expect(await firm.getJob(id)).toMatchObject({ state: "finished", attempts: 1 });
  });

  it("retry and discard refuse ids that are not failed jobs and then change nothing", async () => {
    const firm = env.firm();
    const { job } = brittle(firm);
    const failedId = (await job.enqueue({ n: 1 })).id;
    await firm.drain();
    const readyId = (await job.enqueue({ n: 2 })).id;
    await expect(firm.failedJobs.retry([failedId, readyId])).rejects.toThrow(JobNotFailedError);
    await expect(firm.failedJobs.retry([failedId, readyId])).rejects.toThrow(`Job ${readyId} is ready, not failed`);
    await expect(firm.failedJobs.delete([failedId, 999_999])).rejects.toThrow(JobNotFoundError);
    await expect(firm.failedJobs.retry("7" as never)).rejects.toThrow("job id must be a job id");
    expect(await firm.getJob(failedId)).toMatchObject({ state: "failed" });
    expect(await firm.getJob(readyId)).toMatchObject({ state: "ready" });
  });

  it("delete (or its old name, discard) deletes a failed job; a running job is refused with JobRunningError", async () => {
    const firm = env.firm();
    const { job } = brittle(firm);
    const [goneId, runningId, oldNameId] = (await job.enqueueAll([{ n: 1 }, { n: 2 }, { n: 3 }])).map(
      (result) => result.id,
    );
    await firm.drain();
    expect(await firm.failedJobs.delete(goneId!)).toBe(1);
    expect(await firm.failedJobs.discard(oldNameId!)).toBe(1);
    expect(await firm.getJob(oldNameId!)).toBeNull();
    expect(await firm.getJob(goneId!)).toBeNull();
    // Retried, then claimed by a worker: it is running now.
    await firm.failedJobs.retry(runningId!);
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "busy" }, new Date());
    await claimJobs(database, new QueueSelector("*"), 1, processId);
    const refusal = firm.failedJobs.delete(runningId!);
    await expect(refusal).rejects.toThrow(JobRunningError);
    await expect(firm.failedJobs.delete(runningId!)).rejects.toThrow(
      `Job ${runningId} is running (claimed by process ${processId})`,
    );
    expect(await firm.getJob(runningId!)).toMatchObject({ state: "claimed" });
  });

  it("retryAll works in batches, reports progress, and honours name and queue", async () => {
    const firm = env.firm();
    const { broken, job, other } = brittle(firm);
    await job.enqueueAll([1, 2, 3, 4, 5, 6, 7].map((n) => ({ n })));
    const otherId = (await other.enqueue(null)).id;
    await firm.drain({ concurrency: 4 });
    expect(await firm.failedJobs.count()).toBe(8);
    broken.value = false;
    const progress: Array<{ batch: number; total: number }> = [];
    expect(await firm.failedJobs.retryAll({ name: "breaks", batchSize: 3, onBatch: (p) => progress.push(p) })).toBe(7);
    expect(progress).toEqual([
      { batch: 3, total: 3 },
      { batch: 3, total: 6 },
      { batch: 1, total: 7 },
    ]);
    expect(await firm.failedJobs.list()).toEqual([expect.objectContaining({ id: otherId })]);
    expect(await firm.failedJobs.retryAll({ queue: "no-such-queue" })).toBe(0);
    await firm.drain();
    expect(await firm.failedJobs.count()).toBe(1);
  });

  it("deleteAll deletes every failed job of the filter, in batches (discardAll is its old name)", async () => {
    const firm = env.firm();
    const { job, other } = brittle(firm);
    await job.enqueueAll([1, 2, 3, 4, 5].map((n) => ({ n })));
    const otherId = (await other.enqueue(null)).id;
    await firm.drain({ concurrency: 3 });
    const batches: number[] = [];
    expect(
      await firm.failedJobs.deleteAll({ name: "breaks", batchSize: 2, onBatch: ({ batch }) => batches.push(batch) }),
    ).toBe(5);
    expect(batches).toEqual([2, 2, 1]);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(1);
    expect(await firm.failedJobs.discardAll()).toBe(1);
    expect(await firm.getJob(otherId)).toBeNull();
  });

  it("two retryAll calls at once retry each failed job exactly once", async () => {
    const firm = env.firm();
    const { job } = brittle(firm);
    await job.enqueueAll(Array.from({ length: 40 }, (_, n) => ({ n })));
    await firm.drain({ concurrency: 8 });
    expect(await firm.failedJobs.count()).toBe(40);
    const second = env.firm();
    const counts = await Promise.all([
      firm.failedJobs.retryAll({ batchSize: 5 }),
      second.failedJobs.retryAll({ batchSize: 5 }),
    ]);
    expect(counts[0]! + counts[1]!).toBe(40);
    expect(await countRows(await env.db(), "firm_queue_ready_executions")).toBe(40);
    expect(await firm.failedJobs.count()).toBe(0);
  });
});
