import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";

/** Retries, failed-job operations and queue clearing all go through the concurrency slots. */
describeEachDatabase("concurrency with retries and failed jobs", (env) => {
  it("a failed attempt hands its slot on, and the retry waits for a slot like any job", async () => {
    const firm = env.firm();
    const runs: string[] = [];
    let failuresLeft = 1;
    const sync = firm.defineJob(
      "sync",
      async (args: { account: number; tag: string }) => {
        runs.push(args.tag);
        if (args.tag === "flaky" && failuresLeft-- > 0) throw new Error("upstream timeout");
      },
      { concurrency: { key: (args) => args.account, to: 1 }, retry: { attempts: 2, backoff: 0 } },
    );
    const flaky = (await sync.enqueue({ account: 7, tag: "flaky" })).id;
    const steady = (await sync.enqueue({ account: 7, tag: "steady" })).id;
    expect((await firm.getJob(steady))?.state).toBe("blocked");
    // One claim at a time: the flaky job fails, its slot goes to the steady job, and its retry
    // (due at once) finds the key busy, so it is blocked behind it.
    expect(await firm.drain({ concurrency: 1 })).toBe(3);
    expect(runs).toEqual(["flaky", "steady", "flaky"]);
    expect(await firm.getJob(flaky)).toMatchObject({
      state: "finished",
      attempts: 2,
      lastError: { message: "upstream timeout" },
    });
    expect(await firm.getJob(steady)).toMatchObject({ state: "finished", attempts: 1 });
    const { db } = await firm.database();
    const semaphore = await db
      .selectFrom("firm_queue_semaphores")
      .select("value")
      .where("key", "=", "sync/7")
      .executeTakeFirstOrThrow();
    expect(semaphore.value).toBe(1);
  });

  it("a retry after the backoff is blocked while another job of its key holds the slot", async () => {
    const firm = env.firm();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const job = firm.defineJob(
      "limited",
      async (args: { tag: string }) => {
        if (args.tag === "fails") throw new Error("boom");
        await gate;
      },
      { concurrency: { key: () => "one", to: 1 }, retry: { attempts: 2, backoff: 0 } },
    );
    const fails = (await job.enqueue({ tag: "fails" })).id;
    const holder = (await job.enqueue({ tag: "holds" })).id;
    const supervisor = await firm.start({
      workers: [{ concurrency: 2, pollingInterval: 20 }],
      dispatchers: [{ pollingInterval: 20 }],
    });
    try {
      const deadline = Date.now() + 10_000;
      while ((await firm.getJob(holder))?.state !== "claimed" || (await firm.getJob(fails))?.state !== "blocked") {
        if (Date.now() > deadline)
          throw new Error(`states: ${(await firm.getJob(fails))?.state}, ${(await firm.getJob(holder))?.state}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      release();
      while ((await firm.getJob(fails))?.state !== "failed") {
        if (Date.now() > deadline) throw new Error("the retry never ran");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      release();
      await supervisor.stop();
    }
    expect(await firm.getJob(fails)).toMatchObject({ state: "failed", attempts: 2 });
    expect(await firm.getJob(holder)).toMatchObject({ state: "finished" });
  });

  it("retrying a failed job goes back through its concurrency limit", async () => {
    const firm = env.firm();
    let fail = true;
    const job = firm.defineJob(
      "guarded",
      async () => {
        if (fail) throw new Error("no");
      },
      { concurrency: { key: () => "k", to: 1 } },
    );
    const failed = (await job.enqueue(null)).id;
    await firm.drain();
    expect((await firm.getJob(failed))?.state).toBe("failed");
    const holder = (await job.enqueue(null)).id;
    expect((await firm.getJob(holder))?.state).toBe("ready");
    fail = false;
    expect(await firm.failedJobs.retry(failed)).toBe(1);
    expect(await firm.getJob(failed)).toMatchObject({ state: "blocked", attempts: 0 });
    expect(await firm.drain()).toBe(2);
    expect((await firm.getJob(failed))?.state).toBe("finished");
  });

  it("clearing a queue hands the cleared jobs' slots to blocked jobs", async () => {
    const firm = env.firm();
    const job = firm.defineJob("keyed", async () => {}, { concurrency: { key: () => "shared", to: 1 } });
    const cleared = (await job.enqueue(null, { queue: "doomed" })).id;
    const waiting = (await job.enqueue(null, { queue: "kept" })).id;
    expect((await firm.getJob(waiting))?.state).toBe("blocked");
    expect(await firm.queues.clear("doomed")).toBe(1);
    expect(await firm.getJob(cleared)).toBeNull();
    expect((await firm.getJob(waiting))?.state).toBe("ready");
  });
});
