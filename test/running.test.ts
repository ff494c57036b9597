import { expect, it } from "vitest";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { claimJobs } from "../src/roles/claims.js";
import { JobRunner } from "../src/roles/job-runner.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { silentLogger } from "../src/index.js";

describeEachDatabase("running jobs", (env) => {
  it("gives the handler its arguments and context, and marks the job finished", async () => {
    const firm = env.firm();
    const seen: unknown[] = [];
    const job = firm.defineJob(
      "ctx",
      async (args: { n: number }, context) => {
        seen.push({
          args,
          id: context.jobId,
          name: context.name,
          queue: context.queue,
          attempt: context.attempt,
          aborted: context.signal.aborted,
        });
      },
      { queue: "q" },
    );
    const id = (await job.enqueue({ n: 7 })).id;
    await firm.drain();
    expect(seen).toEqual([{ args: { n: 7 }, id, name: "ctx", queue: "q", attempt: 1, aborted: false }]);
    const info = await firm.getJob(id);
    expect(info).toMatchObject({ state: "finished", attempts: 1 });
    expect(info?.finishedAt).toBeInstanceOf(Date);
    const db = await env.db();
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(0);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
  });

  it("deletes finished jobs when preserveFinishedJobs is false", async () => {
    const firm = env.firm({ preserveFinishedJobs: false });
    const job = firm.defineJob("gone", async () => {});
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect(await firm.getJob(id)).toBeNull();
  });

  it("records a thrown error as a failed execution and carries on with the next job", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    class PaymentDeclined extends Error {
      override name = "PaymentDeclined";
    }
    const bad = firm.defineJob("bad", async () => {
      ran.push("bad");
      throw new PaymentDeclined("card 4242 declined");
    });
    const good = firm.defineJob("good", async () => {
      ran.push("good");
    });
    const badId = (await bad.enqueue(null, { priority: 0 })).id;
    const goodId = (await good.enqueue(null, { priority: 1 })).id;
    expect(await firm.drain()).toBe(2);
    expect(ran).toEqual(["bad", "good"]);
    const failed = await firm.getJob(badId);
    expect(failed).toMatchObject({ state: "failed", attempts: 1, finishedAt: null });
    expect(failed?.error).toMatchObject({ name: "PaymentDeclined", message: "card 4242 declined" });
    expect(failed?.error?.stack).toContain("running.test.ts");
    expect((await firm.getJob(goodId))?.state).toBe("finished");
  });

  it("records non-Error throws readably", async () => {
    const firm = env.firm();
    const job = firm.defineJob("throws-string", async () => {
      throw "plain string";
    });
    const id = (await job.enqueue(null)).id;
    await firm.drain();
    expect((await firm.getJob(id))?.error).toEqual({ name: "NonError", message: "plain string" });
  });

  it("fails a job whose name is not defined here with UnknownJobError, and goes on", async () => {
    const producer = env.firm();
    const unknownId = (await producer.enqueue("nobody-defines-me", { x: 1 }, { undeclared: true })).id!;
    const worker = env.firm();
    const known = worker.defineJob("known", async () => {});
    const knownId = (await known.enqueue(null)).id;
    expect(await worker.drain()).toBe(2);
    const failed = await worker.getJob(unknownId);
    expect(failed?.state).toBe("failed");
    expect(failed?.error?.name).toBe("UnknownJobError");
    expect(failed?.error?.message).toContain('No job named "nobody-defines-me"');
    expect(failed?.error?.message).toContain("known");
    expect((await worker.getJob(knownId))?.state).toBe("finished");
  });

  it("fails a job whose stored arguments cannot be read with DeserializationError", async () => {
    const firm = env.firm();
    const job = firm.defineJob("corrupt", async () => {});
    const id = (await job.enqueue({ ok: true })).id;
    const db = await env.db();
    await db.updateTable("firm_queue_jobs").set({ arguments: "{not json" }).where("id", "=", id).execute();
    await firm.drain();
    expect((await firm.getJob(id))?.error?.name).toBe("DeserializationError");
  });

  it("runs jobs that jobs enqueue, within the same drain", async () => {
    const firm = env.firm();
    const order: number[] = [];
    const chain = firm.defineJob("chain", async (args: { left: number }) => {
      order.push(args.left);
      if (args.left > 0) await chain.enqueue({ left: args.left - 1 });
    });
    await chain.enqueue({ left: 3 });
    expect(await firm.drain()).toBe(4);
    expect(order).toEqual([3, 2, 1, 0]);
  });

  it("a stale worker cannot finish or fail a job whose claim was taken away", async () => {
    const firm = env.firm();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const job = firm.defineJob("slow", async () => gate);
    const id = (await job.enqueue(null)).id;
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "stale-test" }, new Date());
    const [claimed] = await claimJobs(database, new QueueSelector("*"), 1, processId);
    expect(Number(claimed!.id)).toBe(id);
    expect((await firm.getJob(id))?.state).toBe("claimed");
    const runner = new JobRunner(
      database,
      (firm as any).registry,
      (firm as any).policies,
      processId,
      true,
      silentLogger,
    );
    const outcome = runner.run(claimed!, new AbortController().signal);
    // Meanwhile the claim is taken away (crash recovery) and the job runs elsewhere.
    await database.db.deleteFrom("firm_queue_claimed_executions").where("job_id", "=", id).execute();
    await database.db
      .insertInto("firm_queue_ready_executions")
      .values({ job_id: id, queue_name: "default", priority: 0, created_at: new Date() })
      .execute();
    release();
    expect(await outcome).toBe("lost");
    expect(await firm.getJob(id)).toMatchObject({ state: "ready", attempts: 0, finishedAt: null });
  });
});
