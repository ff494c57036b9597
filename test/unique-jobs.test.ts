import { expect, expectTypeOf, it } from "vitest";
import { ConfigurationError, type EnqueuedJob, type EnqueueResult } from "../src/index.js";
import { countRows, describeEachDatabase, enqueued, waitFor } from "./support/harness.js";

describeEachDatabase("unique jobs", (env) => {
  it("skips a job whose key a waiting job holds, and says which job holds it", async () => {
    const firm = env.firm();
    const sync = firm.defineJob("sync", async (_args: { user: number }) => {}, {
      unique: { key: (args) => `user-${args.user}` },
    });
    const first = await sync.enqueue({ user: 1 });
    expect(first.status).toBe("created");
    expect(await sync.enqueue({ user: 1 })).toEqual({ status: "duplicate", id: first.id });
    expect((await sync.enqueue({ user: 2 })).status).toBe("created");
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(2);
    expect(await firm.getJob(first.id)).toMatchObject({ key: "user-1", state: "ready" });
  });

  it("keys are per job name: two jobs may use one key", async () => {
    const firm = env.firm();
    const a = firm.defineJob("a", async () => {}, { unique: { key: "k" } });
    const b = firm.defineJob("b", async () => {}, { unique: { key: "k" } });
    expect((await a.enqueue(null)).status).toBe("created");
    expect((await b.enqueue(null)).status).toBe("created");
  });

  it("a key given at enqueue wins over the definition's, and works for jobs without a unique option", async () => {
    const firm = env.firm();
    const plain = firm.defineJob("plain", async () => {});
    const first = await enqueued(plain.enqueue(null, { key: "once" }));
    expect(await plain.enqueue(null, { key: "once" })).toEqual({ status: "duplicate", id: first });
    expect(await firm.enqueue("plain", null, { key: "once" })).toEqual({ status: "duplicate", id: first });
    expect((await plain.enqueue(null)).status).toBe("created");
  });

  it("mode waiting: once the holder runs, a new job with the key is created", async () => {
    const firm = env.firm();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = firm.defineJob("slow", async () => gate, { unique: { key: "k" } });
    const first = await enqueued(slow.enqueue(null));
    const supervisor = await firm.start({
      workers: [{ queues: "*", concurrency: 1, prefetch: 0, pollingInterval: 20 }],
    });
    try {
      await waitFor(async () => (await firm.getJob(first))?.state === "claimed", 15_000, "the first job running");
      const second = await slow.enqueue(null);
      expect(second.status).toBe("created");
      expect(await slow.enqueue(null)).toEqual({ status: "duplicate", id: second.id });
      release();
      await waitFor(async () => (await firm.getJob(second.id))?.state === "finished", 15_000, "both finished");
      // The first job's end did not free the key the second one took; the second's end did.
      expect((await slow.enqueue(null)).status).toBe("created");
    } finally {
      release();
      await supervisor.stop();
    }
  });

  it("mode running: skipped while the holder runs; free once it finished", async () => {
    const firm = env.firm();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = firm.defineJob("slow", async () => gate, { unique: { key: "k", mode: "running" } });
    const first = await enqueued(slow.enqueue(null));
    const supervisor = await firm.start({
      workers: [{ queues: "*", concurrency: 1, prefetch: 0, pollingInterval: 20 }],
    });
    try {
      await waitFor(async () => (await firm.getJob(first))?.state === "claimed", 15_000, "the job running");
      expect(await slow.enqueue(null)).toEqual({ status: "duplicate", id: first });
      release();
      await waitFor(async () => (await firm.getJob(first))?.state === "finished", 15_000, "the job finished");
      expect((await slow.enqueue(null)).status).toBe("created");
    } finally {
      release();
      await supervisor.stop();
    }
  });

  it("mode finished: held for the period after the job finished, then free", async () => {
    const firm = env.firm();
    const daily = firm.defineJob("daily", async () => {}, { unique: { key: "k", mode: "finished", period: "1s" } });
    const first = await enqueued(daily.enqueue(null));
    expect(await firm.drain()).toBe(1);
    expect(await daily.enqueue(null)).toEqual({ status: "duplicate", id: first });
    const db = await env.db();
    // Move the hold's end into the past rather than sleeping.
    await db
      .updateTable("firm_queue_job_keys")
      .set({ held_until: new Date(Date.now() - 1000) })
      .execute();
    expect((await daily.enqueue(null)).status).toBe("created");
  });

  it("mode finished holds even when finished jobs are not kept", async () => {
    const firm = env.firm({ preserveFinishedJobs: false });
    const daily = firm.defineJob("daily", async () => {}, { unique: { key: "k", mode: "finished", period: "1h" } });
    const first = await enqueued(daily.enqueue(null));
    expect(await firm.drain()).toBe(1);
    expect(await firm.getJob(first)).toBeNull();
    expect(await daily.enqueue(null)).toEqual({ status: "duplicate", id: first });
  });

  it("a failed job gives its key back; a retried one keeps it", async () => {
    const firm = env.firm();
    const flaky = firm.defineJob(
      "flaky",
      async () => {
        throw new Error("no");
      },
      { unique: { key: "k", mode: "running" }, retry: { attempts: 2, backoff: 60_000 } },
    );
    const first = await enqueued(flaky.enqueue(null));
    await firm.drain();
    expect((await firm.getJob(first))?.state).toBe("scheduled");
    expect(await flaky.enqueue(null)).toEqual({ status: "duplicate", id: first });
    const db = await env.db();
    await db
      .updateTable("firm_queue_scheduled_executions")
      .set({ scheduled_at: new Date(0) })
      .execute();
    await firm.dispatch();
    await firm.drain();
    expect((await firm.getJob(first))?.state).toBe("failed");
    expect((await flaky.enqueue(null)).status).toBe("created");
  });

  it("mode replace: the waiting job takes the new arguments and run time", async () => {
    const firm = env.firm();
    const seen: number[] = [];
    const save = firm.defineJob("save", async (args: { v: number }) => void seen.push(args.v), {
      unique: { key: "doc", mode: "replace" },
    });
    const first = await enqueued(save.enqueue({ v: 1 }, { wait: "1h" }));
    expect(await save.enqueue({ v: 2 }, { wait: "2h" })).toEqual({ status: "replaced", id: first });
    const job = await firm.getJob(first);
    expect(job).toMatchObject({ arguments: { v: 2 }, state: "scheduled" });
    expect(job!.scheduledAt!.getTime()).toBeGreaterThan(Date.now() + 90 * 60_000);
    // Replaced to run now: it leaves the scheduled line for the ready one.
    expect(await save.enqueue({ v: 3 })).toEqual({ status: "replaced", id: first });
    expect(await firm.getJob(first)).toMatchObject({ arguments: { v: 3 }, state: "ready" });
    expect(await countRows(await env.db(), "firm_queue_scheduled_executions")).toBe(0);
    expect(await firm.drain()).toBe(1);
    expect(seen).toEqual([3]);
  });

  it("enqueueAll honours keys, between the jobs of one call too", async () => {
    const firm = env.firm();
    const sync = firm.defineJob("sync", async (_args: { user: number }) => {}, {
      unique: { key: (args) => args.user },
    });
    const held = await enqueued(sync.enqueue({ user: 1 }));
    const results = await sync.enqueueAll([{ user: 1 }, { user: 2 }, { user: 3 }, { user: 2 }]);
    expect(results.map((result) => result.status)).toEqual(["duplicate", "created", "created", "duplicate"]);
    expect(results[0]!.id).toBe(held);
    expect(results[3]!.id).toBe(results[1]!.id);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(3);
    expect(await countRows(await env.db(), "firm_queue_ready_executions")).toBe(3);
  });

  it("enqueueAll in mode replace: the last job of the call wins", async () => {
    const firm = env.firm();
    const save = firm.defineJob("save", async (_args: { v: number }) => {}, {
      unique: { key: "doc", mode: "replace" },
    });
    const results = await save.enqueueAll([{ v: 1 }, { v: 2 }, { v: 3 }]);
    expect(results.map((result) => result.status)).toEqual(["created", "replaced", "replaced"]);
    expect(await firm.getJob(results[0]!.id)).toMatchObject({ arguments: { v: 3 }, state: "ready" });
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(1);
  });

  it("a key held by a job of a cleared queue is free again", async () => {
    const firm = env.firm();
    const sync = firm.defineJob("sync", async () => {}, { unique: { key: "k" } });
    await enqueued(sync.enqueue(null));
    await firm.queues.clear("default");
    expect(await countRows(await env.db(), "firm_queue_job_keys")).toBe(0);
    expect((await sync.enqueue(null)).status).toBe("created");
  });

  it("types: the key function is checked against the arguments, the result is typed", () => {
    const firm = env.firm();
    const job = firm.defineJob("typed", async (_args: { userId: number }) => {}, {
      unique: { key: (args) => args.userId, mode: "running" },
    });
    expectTypeOf(job.enqueue).returns.resolves.toEqualTypeOf<EnqueuedJob>();
    expectTypeOf(job.enqueue)
      .parameter(1)
      .exclude<undefined>()
      .toHaveProperty("key")
      .toEqualTypeOf<string | number | undefined>();
    const wrongKey = () =>
      // @ts-expect-error: `missing` is not a property of the arguments
      firm.defineJob("typed-2", async (_args: { userId: number }) => {}, { unique: { key: (args) => args.missing } });
    const wrongMode = () =>
      // @ts-expect-error: not a mode
      firm.defineJob("typed-3", async () => {}, { unique: { key: "k", mode: "sometimes" } });
    expect(wrongMode).toThrow(ConfigurationError);
    expect(typeof wrongKey).toBe("function");
  });

  it("bad keys and options are named errors and write nothing", async () => {
    const firm = env.firm();
    expect(() => firm.defineJob("x", async () => {}, { unique: { key: "k", mode: "sometimes" as never } })).toThrow(
      ConfigurationError,
    );
    expect(() => firm.defineJob("y", async () => {}, { unique: { key: "k", mode: "finished" } })).toThrow(/period/);
    const job = firm.defineJob("z", async (_args: { k: string }) => {}, { unique: { key: (args) => args.k } });
    await expect(job.enqueue({ k: "" })).rejects.toThrow(ConfigurationError);
    await expect(job.enqueue({ k: "x".repeat(256) })).rejects.toThrow(/at most 255/);
    await expect(job.enqueueAll([{ k: "fine" }, { k: "" }])).rejects.toThrow(ConfigurationError);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
  });

  it("race: many connections enqueue one key at once, exactly one job is created", async () => {
    // Each FirmQueue has its own pool, so these are separate connections and transactions.
    const firms = [...Array(6)].map(() => env.firm());
    const jobs = firms.map((firm) => firm.defineJob("sync", async () => {}, { unique: { key: "k", mode: "running" } }));
    for (const firm of firms) await firm.database();
    for (let round = 0; round < 3; round++) {
      const results: EnqueueResult[] = await Promise.all(
        jobs.flatMap((job) => [job.enqueue(null, { key: `k${round}` }), job.enqueue(null, { key: `k${round}` })]),
      );
      const created = results.filter((result) => result.status === "created");
      expect(created).toHaveLength(1);
      expect(results.every((result) => result.id === created[0]!.id)).toBe(true);
    }
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(3);
    expect(await countRows(await env.db(), "firm_queue_job_keys")).toBe(3);
    // A stale holder (its job deleted behind firm-queue's back): every enqueuer tries to take the key over at once.
    await (await env.db()).deleteFrom("firm_queue_jobs").where("job_key", "=", "k0").execute();
    const takeover: EnqueueResult[] = await Promise.all(
      jobs.flatMap((job) => [job.enqueue(null, { key: "k0" }), job.enqueue(null, { key: "k0" })]),
    );
    const taken = takeover.filter((result) => result.status === "created");
    expect(taken).toHaveLength(1);
    expect(takeover.every((result) => result.id === taken[0]!.id)).toBe(true);
    expect(await countRows(await env.db(), "firm_queue_job_keys")).toBe(3);
  });
});
