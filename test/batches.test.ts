import { expect, it } from "vitest";
import { BatchEndedError, InvalidBatchError, InvalidJobArgumentsError, type BatchJob } from "../src/index.js";
import type { EnqueueResult } from "../src/lifecycle/enqueue-result.js";
import { appClients } from "./support/app-clients.js";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { countingInserts } from "./support/insert-counter.js";

describeEachDatabase("batches (firm.batch)", (env) => {
  it("runs onSuccess and onFinish once when every job finished, and getBatch counts the batch down", async () => {
    const firm = env.firm();
    const resized: number[] = [];
    const callbacks: string[] = [];
    firm.defineJob("resize", async (args: { photo: number }) => void resized.push(args.photo));
    for (const name of ["succeeded", "failed", "finished"])
      firm.defineJob(name, async (args: { album: string }) => void callbacks.push(`${name}:${args.album}`));
    const jobs: BatchJob[] = [1, 2, 3].map((photo) => ({
      name: "resize",
      args: { photo },
      ...(photo < 3 ? { options: { queue: "first" } } : {}),
    }));
    const batch = await firm.batch(jobs, {
      onSuccess: { name: "succeeded", args: { album: "x" } },
      onFailure: { name: "failed", args: { album: "x" } },
      onFinish: { name: "finished", args: { album: "x" } },
    });
    expect(typeof batch.id).toBe("number");
    expect(batch.jobs.map((job) => job.status)).toEqual(["created", "created", "created"]);
    expect(await firm.getBatch(batch.id)).toEqual({
      id: batch.id,
      state: "pending",
      total: 3,
      pending: 3,
      finished: 0,
      failed: 0,
      cancelled: 0,
    });
    await firm.drain({ queues: "first" });
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "pending", pending: 1, finished: 2 });
    expect(callbacks).toEqual([]);
    await firm.drain();
    expect(resized.sort()).toEqual([1, 2, 3]);
    expect(callbacks.sort()).toEqual(["finished:x", "succeeded:x"]);
    expect(await firm.getBatch(batch.id)).toEqual({
      id: batch.id,
      state: "finished",
      total: 3,
      pending: 0,
      finished: 3,
      failed: 0,
      cancelled: 0,
    });
    expect(await firm.drain()).toBe(0);
    expect(callbacks).toHaveLength(2);
    expect(await firm.getBatch(999_999)).toBeNull();
  });

  it("a job that fails for good makes it onFailure (after every job ended); retries are not ends", async () => {
    const firm = env.firm();
    const callbacks: string[] = [];
    let flaky = 0;
    firm.defineJob(
      "broken",
      async () => {
        throw new Error("no");
      },
      { retry: { attempts: 1 } },
    );
    firm.defineJob(
      "flaky",
      async () => {
        flaky++;
        if (flaky === 1) throw new Error("first attempt fails");
      },
      { retry: { attempts: 3, backoff: 0, jitter: 0 } },
    );
    firm.defineJob("slow", async () => {});
    for (const name of ["succeeded", "failed", "finished"]) firm.defineJob(name, async () => void callbacks.push(name));
    const batch = await firm.batch(
      [
        { name: "broken", args: null },
        { name: "flaky", args: null },
        { name: "slow", args: null, options: { queue: "later" } },
      ],
      {
        onSuccess: { name: "succeeded", args: null },
        onFailure: { name: "failed", args: null },
        onFinish: { name: "finished", args: null },
      },
    );
    await firm.drain({ queues: "default" });
    expect(flaky).toBe(2);
    // The flaky job's failed first attempt did not count: it finished on its second.
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "pending", pending: 1, finished: 1, failed: 1 });
    expect(callbacks).toEqual([]);
    await firm.drain({ queues: "later" });
    await firm.drain();
    expect(callbacks.sort()).toEqual(["failed", "finished"]);
    expect(await firm.getBatch(batch.id)).toEqual({
      id: batch.id,
      state: "failed",
      total: 3,
      pending: 0,
      finished: 2,
      failed: 1,
      cancelled: 0,
    });
  });

  it("cancelled jobs count as cancelled, waiting or running; a batch of cancelled jobs runs onFinish only", async () => {
    const firm = env.firm();
    const callbacks: string[] = [];
    firm.defineJob("step", async () => {});
    for (const name of ["succeeded", "failed", "finished"]) firm.defineJob(name, async () => void callbacks.push(name));
    const batch = await firm.batch(
      [
        { name: "step", args: null },
        { name: "step", args: null, options: { wait: "1h" } },
      ],
      {
        onSuccess: { name: "succeeded", args: null },
        onFailure: { name: "failed", args: null },
        onFinish: { name: "finished", args: null },
      },
    );
    await firm.drain();
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "pending", pending: 1, finished: 1 });
    expect(await firm.jobs.cancel(batch.jobs[1]!.id!)).toBe("cancelled");
    // Cancelling again is no second end.
    expect(await firm.jobs.cancel(batch.jobs[1]!.id!)).toBe("ended");
    await firm.drain();
    expect(callbacks).toEqual(["finished"]);
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "cancelled", pending: 0, finished: 1, cancelled: 1 });
  });

  it("a job dropped by its concurrency limit as it is written counts as cancelled", async () => {
    const firm = env.firm();
    const callbacks: string[] = [];
    firm.defineJob("single", async () => {}, { concurrency: { key: () => "one", to: 1, onConflict: "discard" } });
    firm.defineJob("finished", async () => void callbacks.push("finished"));
    const batch = await firm.batch(
      [
        { name: "single", args: null },
        { name: "single", args: null },
      ],
      { onFinish: { name: "finished", args: null } },
    );
    expect(batch.jobs.map((job) => job.status)).toEqual(["created", "dropped"]);
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "pending", total: 2, pending: 1, cancelled: 1 });
    await firm.drain();
    expect(callbacks).toEqual(["finished"]);
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "cancelled", finished: 1, cancelled: 1 });
  });

  it("jobs discarded by queues.clear count as cancelled in their batch, and their dependents are cancelled", async () => {
    const firm = env.firm();
    const callbacks: string[] = [];
    firm.defineJob("step", async () => {});
    firm.defineJob("finished", async () => void callbacks.push("finished"));
    const batch = await firm.batch(
      [
        { name: "step", args: null },
        { name: "step", args: null, options: { queue: "doomed" } },
      ],
      { onFinish: { name: "finished", args: null } },
    );
    const dependent = await firm.enqueue("step", null, { dependsOn: [batch.jobs[1]!.id!] });
    expect(await firm.queues.clear("doomed")).toBe(1);
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "pending", pending: 1, cancelled: 1 });
    expect((await firm.getJob(dependent.id!))?.state).toBe("cancelled");
    await firm.drain();
    expect(callbacks).toEqual(["finished"]);
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "cancelled", finished: 1, cancelled: 1 });
  });

  it("counts ends with finished jobs deleted as they finish (preserveFinishedJobs: false)", async () => {
    const firm = env.firm({ preserveFinishedJobs: false });
    const callbacks: string[] = [];
    firm.defineJob("step", async () => ({ kept: "no" }));
    firm.defineJob("succeeded", async () => void callbacks.push("succeeded"));
    const batch = await firm.batch(
      [
        { name: "step", args: null },
        { name: "step", args: null },
      ],
      { onSuccess: { name: "succeeded", args: null } },
    );
    await firm.drain();
    expect(callbacks).toEqual(["succeeded"]);
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "finished", total: 2, finished: 2 });
    expect(await firm.getJob(batch.jobs[0]!.id!)).toBeNull();
  });

  it("a job of a batch adds jobs to it while it runs: the batch ends only once those have ended too", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    const seen: Array<number | undefined> = [];
    const errors: unknown[] = [];
    firm.defineJob("scan", async (args: { folder: string }, context) => {
      ran.push(`scan:${args.folder}`);
      seen.push(context.batch?.id);
      const added = await context.batch!.add([
        { name: "resize", args: { photo: `${args.folder}/1` } },
        { name: "resize", args: { photo: `${args.folder}/2` }, options: { queue: "later" } },
      ]);
      expect(added.map((job) => job.status)).toEqual(["created", "created"]);
      await expect(context.batch!.add([{ name: "nope", args: null }])).rejects.toThrow(
        /^context\.batch\.add\[0\]\.name names "nope"/,
      );
    });
    firm.defineJob("resize", async (args: { photo: string }, context) => {
      ran.push(`resize:${args.photo}`);
      seen.push(context.batch?.id);
    });
    firm.defineJob("alone", async (_args: null, context) => void seen.push(context.batch?.id));
    firm.defineJob("finished", async (_args: null, context) => {
      ran.push("finished");
      seen.push(context.batch?.id);
      try {
        await context.batch!.add([{ name: "resize", args: { photo: "late" } }]);
      } catch (error) {
        errors.push(error);
      }
    });
    const batch = await firm.batch([{ name: "scan", args: { folder: "a" } }], {
      onFinish: { name: "finished", args: null },
    });
    await firm.enqueue("alone", null);
    await firm.drain({ queues: "default" });
    expect(ran).toEqual(["scan:a", "resize:a/1"]);
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "pending", total: 3, pending: 1, finished: 2 });
    await firm.drain();
    expect(ran).toEqual(["scan:a", "resize:a/1", "resize:a/2", "finished"]);
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "finished", total: 3, pending: 0, finished: 3 });
    // Every job of the batch and its callback see the batch; a job outside it sees none.
    expect(seen).toHaveLength(5);
    expect(seen.filter((id) => id === batch.id)).toHaveLength(4);
    expect(seen.filter((id) => id === undefined)).toHaveLength(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(BatchEndedError);
    expect(await countRows(await env.db(), "firm_queue_batch_jobs")).toBe(3);
  });

  it("bad input is an InvalidBatchError naming the place, and nothing is written", async () => {
    const firm = env.firm();
    firm.defineJob("step", async () => {});
    firm.defineJob("once", async () => {}, { unique: { key: () => "k" } });
    firm.defineJob("typed", async () => {}, {
      schema: {
        "~standard": {
          version: 1,
          vendor: "test",
          validate: (value: unknown) =>
            typeof value === "number" ? { value } : { issues: [{ message: "must be a number" }] },
        },
      },
    });
    const ok = [{ name: "step", args: null }];
    const bad: Array<[() => Promise<unknown>, RegExp]> = [
      [() => firm.batch(null as never), /^batch\.jobs must be an array/],
      [() => firm.batch({} as never), /^batch\.jobs must be an array/],
      [() => firm.batch([]), /^batch\.jobs is empty/],
      [() => firm.batch([{ args: null } as never]), /^batch\.jobs\[0\]\.name is missing/],
      [
        () => firm.batch([...ok, { name: "nope", args: null }]),
        /^batch\.jobs\[1\]\.name names "nope", a job not declared/,
      ],
      [
        () => firm.batch([{ name: "step", args: null, extra: 1 } as never]),
        /^batch\.jobs\[0\] has an unknown key "extra"/,
      ],
      [() => firm.batch([{ name: "once", args: null }]), /a job with a unique key/],
      [() => firm.batch([{ name: "step", options: { key: "k" } }]), /options\.key is not supported/],
      [() => firm.batch([{ name: "step", options: { transaction: {} } as never }]), /is not a job's option/],
      [() => firm.batch(ok, { onFinish: { args: null } as never }), /^batch\.onFinish\.name is missing/],
      [() => firm.batch(ok, { onSuccess: { name: "nope", args: null } }), /^batch\.onSuccess\.name names "nope"/],
      [() => firm.batch(ok, { onFailure: { name: "once", args: null } }), /^batch\.onFailure\.name names "once"/],
    ];
    for (const [attempt, message] of bad) {
      await expect(attempt()).rejects.toThrow(InvalidBatchError);
      await expect(attempt()).rejects.toThrow(message);
    }
    await expect(firm.batch(ok, { onFinish: { name: "typed", args: "x" } })).rejects.toThrow(InvalidJobArgumentsError);
    await expect(firm.batch([...ok, { name: "typed", args: "x" }])).rejects.toThrow(InvalidJobArgumentsError);
    await expect(firm.batch(ok, { unknown: 1 } as never)).rejects.toThrow(/batch option/);
    await expect(firm.getBatch(0)).rejects.toThrow(/getBatch id/);
    const db = await env.db();
    expect(await countRows(db, "firm_queue_jobs")).toBe(0);
    expect(await countRows(db, "firm_queue_batches")).toBe(0);
    expect(await countRows(db, "firm_queue_batch_jobs")).toBe(0);
  });

  it("a 10,000-job batch is written with one INSERT per table on PostgreSQL (1,000 rows each elsewhere), one batch row, and its callback runs once", {
    timeout: 120_000,
  }, async () => {
    const firm = env.firm();
    let notified = 0;
    firm.defineJob("resize", async () => {});
    firm.defineJob("notify", async () => void notified++);
    const jobs = [...Array(10_000).keys()].map((photo) => ({ name: "resize", args: { photo } }));
    let batch = { id: 0, jobs: [] as EnqueueResult[] };
    const inserts = await countingInserts(await firm.database(), async () => {
      batch = await firm.batch(jobs, { onFinish: { name: "notify", args: null } });
    });
    const perTable = env.dialect === "postgres" ? 1 : 10;
    expect(inserts).toEqual({
      firm_queue_batches: 1,
      firm_queue_jobs: perTable,
      firm_queue_batch_jobs: perTable,
      firm_queue_ready_executions: perTable,
    });
    const ids = batch.jobs.map((job) => job.id!);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const db = await env.db();
    const rows = await db
      .selectFrom("firm_queue_jobs")
      .select(["id", "arguments", "batch_id", "has_dependents"])
      .where("id", "in", [ids[0]!, ids[4_321]!, ids[9_999]!])
      .orderBy("id")
      .execute();
    expect(
      rows.map((row) => [Number(row.id), JSON.parse(row.arguments!), Number(row.batch_id), row.has_dependents]),
    ).toEqual([
      [ids[0], { photo: 0 }, batch.id, 1],
      [ids[4_321], { photo: 4_321 }, batch.id, 1],
      [ids[9_999], { photo: 9_999 }, batch.id, 1],
    ]);
    const members = await db
      .selectFrom("firm_queue_batch_jobs")
      .select(["job_id", "batch_id"])
      .orderBy("job_id")
      .execute();
    expect(members.map((row) => [Number(row.job_id), Number(row.batch_id)])).toEqual(ids.map((id) => [id, batch.id]));
    expect(await firm.getBatch(batch.id)).toMatchObject({ total: 10_000, pending: 10_000 });
    await firm.drain({ concurrency: 50 });
    expect(notified).toBe(1);
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "finished", pending: 0, finished: 10_000 });
  });

  for (const { name, open } of appClients(env.dialect, () => env.url)) {
    it(`${name}: a batch in the app's transaction exists if and only if it commits`, async () => {
      const firm = env.firm();
      const callbacks: string[] = [];
      firm.defineJob("step", async () => {});
      firm.defineJob("finished", async () => void callbacks.push("finished"));
      const jobs = [
        { name: "step", args: null },
        { name: "step", args: null },
      ];
      const onFinish = { name: "finished", args: null };
      const app = open();
      try {
        await app.transaction(async (transaction) => void (await firm.batch(jobs, { onFinish, transaction })), {
          rollback: true,
        });
        const db = await env.db();
        expect(await countRows(db, "firm_queue_jobs")).toBe(0);
        expect(await countRows(db, "firm_queue_batches")).toBe(0);
        let id = 0;
        await app.transaction(
          async (transaction) => void (id = (await firm.batch(jobs, { onFinish, transaction })).id),
          {
            rollback: false,
          },
        );
        expect(await countRows(db, "firm_queue_batch_jobs")).toBe(2);
        expect(await firm.drain()).toBe(3);
        expect(callbacks).toEqual(["finished"]);
        expect(await firm.getBatch(id)).toMatchObject({ state: "finished", finished: 2 });
      } finally {
        await app.close();
      }
    });
  }
});
