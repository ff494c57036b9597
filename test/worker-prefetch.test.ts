import { expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";
import { ConfigurationError } from "../src/index.js";
import type { Db } from "../src/database/dialect.js";

/** Claims held by worker processes now (running and buffered jobs alike). */
async function claimedNow(db: Db): Promise<number> {
  return countRows(db, "firm_queue_claimed_executions");
}

describeEachDatabase("worker claiming ahead (prefetch)", (env) => {
  it("a graceful stop puts prefetched jobs that never started back in line, attempts unchanged", async () => {
    const firm = env.firm();
    const started: number[] = [];
    let aborted = false;
    let letEnd!: () => void;
    const ending = new Promise<void>((resolve) => (letEnd = resolve));
    const job = firm.defineJob("slow", async (args: { n: number }, context) => {
      started.push(args.n);
      // Runs until the worker stops and the test lets it end, then ends normally (it finishes).
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      aborted = true;
      await ending;
    });
    const ids = (await job.enqueueAll(Array.from({ length: 10 }, (_, n) => ({ n })))).map((result) => result.id);
    const supervisor = await firm.start({
      workers: [{ concurrency: 1, prefetch: 5, pollingInterval: 10 }],
      dispatchers: [],
    });
    const db = await env.db();
    await waitFor(
      async () => started.length === 1 && (await claimedNow(db)) === 6,
      10_000,
      "one running job and five claimed ahead",
    );
    const stopping = supervisor.stop();
    // The unstarted jobs go back while the running one is still running, not at deregistration.
    await waitFor(
      async () => (await countRows(db, "firm_queue_ready_executions")) === 9,
      10_000,
      "nine jobs back in line",
    );
    expect(aborted).toBe(true);
    expect(await claimedNow(db)).toBe(1);
    letEnd();
    await stopping;
    expect(started).toEqual([0]);
    const states = await Promise.all(ids.map((id) => firm.getJob(id!)));
    expect(states[0]).toMatchObject({ state: "finished", attempts: 1 });
    for (const info of states.slice(1)) expect(info).toMatchObject({ state: "ready", attempts: 0 });
    expect(await claimedNow(db)).toBe(0);
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(9);
  });

  it("never holds more unended claims than its slots plus the prefetch bound, and runs every job once in order", async () => {
    const firm = env.firm();
    const db = await env.db();
    const order: number[] = [];
    let most = 0;
    let mostInAll = 0;
    let ids: number[] = [];
    const job = firm.defineJob("count", async (args: { n: number }) => {
      order.push(args.n);
      // One slot, jobs in order: every job before this one has ended, so the claims on this job
      // and later ones are the running job and the buffered ones; the rest wait for their write.
      const claimed = (await db.selectFrom("firm_queue_claimed_executions").select("job_id").execute()).map((row) =>
        Number(row.job_id),
      );
      most = Math.max(most, claimed.filter((id) => id >= ids[args.n]!).length);
      mostInAll = Math.max(mostInAll, claimed.length);
    });
    ids = (await job.enqueueAll(Array.from({ length: 40 }, (_, n) => ({ n })))).map((result) => Number(result.id));
    const supervisor = await firm.start({
      workers: [{ concurrency: 1, prefetch: 3, pollingInterval: 10 }],
      dispatchers: [],
    });
    try {
      await waitFor(() => order.length === 40, 20_000, "40 jobs");
    } finally {
      await supervisor.stop();
    }
    expect(order).toEqual(Array.from({ length: 40 }, (_, n) => n));
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
    // Jobs that ended and wait for their outcome's write are bounded apart, by as many again.
    expect(mostInAll).toBeLessThanOrEqual(8);
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(0);
  });

  it("with prefetch 0 claims only for free slots", async () => {
    const firm = env.firm();
    let started = 0;
    const job = firm.defineJob("blocking", async (_args, context) => {
      started++;
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
    });
    await job.enqueueAll(Array.from({ length: 5 }, () => null));
    const supervisor = await firm.start({
      workers: [{ concurrency: 2, prefetch: 0, pollingInterval: 10 }],
      dispatchers: [],
    });
    const db = await env.db();
    await waitFor(() => started === 2, 10_000, "two running jobs");
    // Give a wrongly eager worker many polls to claim more.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await claimedNow(db)).toBe(2);
    await supervisor.stop();
  });

  it("rejects a prefetch that is not a whole number of at least 0", async () => {
    const firm = env.firm();
    await expect(firm.start({ workers: [{ prefetch: -1 }] })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(firm.start({ workers: [{ prefetch: 1.5 }] })).rejects.toThrow(
      /prefetch must be a whole number of at least 0/,
    );
    expect(await countRows(await env.db(), "firm_queue_processes")).toBe(0);
  });
});
