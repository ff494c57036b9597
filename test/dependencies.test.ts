import { expect, it } from "vitest";
import { InvalidDependencyError, JobNotFoundError, type DependencyResult } from "../src/index.js";
import { MAX_DEPENDENCIES } from "../src/definitions/dependency-options.js";
import type { JobPolicies } from "../src/definitions/job-policies.js";
import { dispatchAllDue } from "../src/roles/dispatcher.js";
import { countRows, describeEachDatabase, enqueued } from "./support/harness.js";

describeEachDatabase("job dependencies (dependsOn)", (env) => {
  it("a dependent is pending until every dependency finished, then runs once and reads their results in order", async () => {
    const firm = env.firm();
    const seen: DependencyResult[][] = [];
    const resize = firm.defineJob("resize", async (args: { n: number }) => ({ size: args.n * 10 }));
    const publish = firm.defineJob("publish", async (_args: null, context) => {
      seen.push(await context.dependencyResults());
    });
    const a = await enqueued(resize.enqueue({ n: 1 }));
    const b = await enqueued(resize.enqueue({ n: 2 }, { queue: "later" }));
    const p = await enqueued(publish.enqueue(null, { dependsOn: [b, a] }));
    expect((await firm.getJob(p))?.state).toBe("pending");
    const listed = await firm.inspect.jobs({ state: "pending" });
    expect(listed.jobs.map((job) => [job.id, job.state])).toEqual([[p, "pending"]]);
    expect(await firm.inspect.count({ state: "pending" })).toEqual({ count: 1, exact: true });
    expect(await firm.drain({ queues: "default" })).toBe(1);
    expect((await firm.getJob(p))?.state).toBe("pending");
    expect(await firm.drain()).toBe(2);
    expect((await firm.getJob(p))?.state).toBe("finished");
    expect(seen).toEqual([
      [
        { id: b, name: "resize", state: "finished", result: { size: 20 } },
        { id: a, name: "resize", state: "finished", result: { size: 10 } },
      ],
    ]);
  });

  it("a dependency already finished counts at once; one already failed cancels the dependent, or not with run", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    const ok = firm.defineJob("ok", async () => "done");
    const bad = firm.defineJob(
      "bad",
      async () => {
        throw new Error("no");
      },
      { retry: { attempts: 1 } },
    );
    const after = firm.defineJob("after", async (args: { tag: string }, context) => {
      ran.push(`${args.tag}:${(await context.dependencyResults()).map((dep) => dep.state).join(",")}`);
    });
    const done = await enqueued(ok.enqueue(null));
    const failed = await enqueued(bad.enqueue(null));
    await firm.drain();
    const runs = await enqueued(after.enqueue({ tag: "finished" }, { dependsOn: [done] }));
    expect((await firm.getJob(runs))?.state).toBe("ready");
    const cancelled = await enqueued(after.enqueue({ tag: "cancel" }, { dependsOn: [done, failed] }));
    expect((await firm.getJob(cancelled))?.state).toBe("cancelled");
    await enqueued(after.enqueue({ tag: "run" }, { dependsOn: [failed], onDependencyFailure: "run" }));
    await firm.drain();
    expect(ran.sort()).toEqual(["finished:finished", "run:failed"]);
  });

  it("a dependency that fails for good cancels its dependents and theirs; a dependent with run runs anyway", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    let attempts = 0;
    const flaky = firm.defineJob(
      "flaky",
      async () => {
        attempts++;
        throw new Error("broken");
      },
      { retry: { attempts: 2, backoff: "1h" } },
    );
    const step = firm.defineJob("step", async (args: { tag: string }, context) => {
      const deps = await context.dependencyResults();
      ran.push(`${args.tag}:${deps.map((dep) => `${dep.name}=${dep.state}`).join(",")}`);
    });
    const root = await enqueued(flaky.enqueue(null));
    const child = await enqueued(step.enqueue({ tag: "child" }, { dependsOn: [root] }));
    const grandchild = await enqueued(step.enqueue({ tag: "grandchild" }, { dependsOn: [child] }));
    const anyway = await enqueued(step.enqueue({ tag: "anyway" }, { dependsOn: [root], onDependencyFailure: "run" }));
    // The first attempt fails and is retried later: nothing is released or cancelled yet.
    await firm.drain();
    expect(attempts).toBe(1);
    for (const id of [child, grandchild, anyway]) expect((await firm.getJob(id))?.state).toBe("pending");
    await (await env.db())
      .updateTable("firm_queue_scheduled_executions")
      .set({ scheduled_at: new Date(Date.now() - 1000) })
      .execute();
    const policies = (firm as unknown as { policies: JobPolicies }).policies;
    await dispatchAllDue(await firm.database(), policies, 100);
    await firm.drain();
    expect(attempts).toBe(2);
    expect((await firm.getJob(root))?.state).toBe("failed");
    expect((await firm.getJob(child))?.state).toBe("cancelled");
    expect((await firm.getJob(grandchild))?.state).toBe("cancelled");
    expect(ran).toEqual(["anyway:flaky=failed"]);
  });

  it("cancelling a job with dependents applies onDependencyFailure; a pending job can be cancelled itself", async () => {
    const firm = env.firm();
    const ran: number[] = [];
    const work = firm.defineJob("work", async (_args: null, context) => void ran.push(context.jobId));
    const first = await enqueued(work.enqueue(null));
    const cancelMe = await enqueued(work.enqueue(null, { dependsOn: [first] }));
    const runAnyway = await enqueued(work.enqueue(null, { dependsOn: [first], onDependencyFailure: "run" }));
    const below = await enqueued(work.enqueue(null, { dependsOn: [cancelMe] }));
    expect(await firm.jobs.cancel(first)).toBe("cancelled");
    expect((await firm.getJob(cancelMe))?.state).toBe("cancelled");
    expect((await firm.getJob(below))?.state).toBe("cancelled");
    expect((await firm.getJob(runAnyway))?.state).toBe("ready");
    const head = await enqueued(work.enqueue(null));
    const waiting = await enqueued(work.enqueue(null, { dependsOn: [head] }));
    expect(await firm.jobs.cancel(waiting)).toBe("cancelled");
    expect((await firm.getJob(waiting))?.state).toBe("cancelled");
    await firm.drain();
    expect(ran.sort((x, y) => x - y)).toEqual([runAnyway, head]);
  });

  it("an unknown id is a JobNotFoundError and nothing of the call is written", async () => {
    const firm = env.firm();
    const work = firm.defineJob("work", async () => {});
    const real = await enqueued(work.enqueue(null, { wait: "1h" }));
    const db = await env.db();
    const before = await countRows(db, "firm_queue_jobs");
    await expect(work.enqueue(null, { dependsOn: [real, real + 1000] })).rejects.toThrow(JobNotFoundError);
    await expect(
      work.enqueueAll([null, null], { each: [{ dependsOn: [real] }, { dependsOn: [real + 1000] }] }),
    ).rejects.toThrow(JobNotFoundError);
    await expect(firm.enqueue("work", null, { dependsOn: [real + 1000] })).rejects.toThrow(JobNotFoundError);
    expect(await countRows(db, "firm_queue_jobs")).toBe(before);
    expect(await countRows(db, "firm_queue_job_dependencies")).toBe(0);
    const row = await db
      .selectFrom("firm_queue_jobs")
      .select("has_dependents")
      .where("id", "=", real)
      .executeTakeFirst();
    expect(row?.has_dependents).toBe(0);
  });

  it("bad dependsOn and onDependencyFailure values are named errors and write nothing", async () => {
    const firm = env.firm();
    const work = firm.defineJob("work", async () => {});
    const real = await enqueued(work.enqueue(null, { wait: "1h" }));
    const db = await env.db();
    const before = await countRows(db, "firm_queue_jobs");
    const bad: unknown[] = [
      { dependsOn: real },
      { dependsOn: "1,2" },
      { dependsOn: [real, real] },
      { dependsOn: [0] },
      { dependsOn: [1.5] },
      { dependsOn: new Array(MAX_DEPENDENCIES + 1).fill(real) },
      { dependsOn: [real], onDependencyFailure: "ignore" },
    ];
    for (const options of bad) {
      await expect(work.enqueue(null, options as never)).rejects.toThrow(InvalidDependencyError);
      await expect(work.enqueueAll([null, null], { each: [{}, options as never] })).rejects.toThrow(
        InvalidDependencyError,
      );
    }
    await expect(work.enqueue(null, { dependsOn: real } as never)).rejects.toThrow(/option dependsOn must be a list/);
    await expect(work.enqueue(null, { dependsOn: new Array(MAX_DEPENDENCIES + 1).fill(real) })).rejects.toThrow(
      `at most ${MAX_DEPENDENCIES}`,
    );
    expect(await countRows(db, "firm_queue_jobs")).toBe(before);
  });

  it("a dependent added while its dependency runs is released by that run's finish", async () => {
    // The worker learnt at claim time that the job had no dependents; its finish must still see
    // the one added since, on the one-statement path and on the transaction path alike, whether
    // finished jobs are kept or deleted.
    for (const [preserveFinishedJobs, returning] of [
      [true, false],
      [true, true],
      [false, false],
    ] as const) {
      const firm = env.firm({ preserveFinishedJobs });
      let dependent = 0;
      const ran: number[] = [];
      firm.defineJob("later", async (_args: null, context) => void ran.push(context.jobId));
      const first = firm.defineJob("first", async (_args: null, context) => {
        dependent = await enqueued(firm.enqueue("later", null, { dependsOn: [context.jobId] }));
        expect((await firm.getJob(dependent))?.state).toBe("pending");
        return returning ? { kept: true } : undefined;
      });
      await enqueued(first.enqueue(null));
      expect(await firm.drain()).toBe(2);
      expect(ran).toEqual([dependent]);
      await firm.close();
    }
  });

  it("cleanup and finished jobs not kept leave a pending dependent its count and its dependencies' results", async () => {
    for (const preserveFinishedJobs of [true, false]) {
      const firm = env.firm({ preserveFinishedJobs });
      const seen: DependencyResult[][] = [];
      const part = firm.defineJob("part", async (args: { n: number }) => args.n);
      const whole = firm.defineJob("whole", async (_args: null, context) => {
        seen.push(await context.dependencyResults());
      });
      const early = await enqueued(part.enqueue({ n: 1 }));
      const late = await enqueued(part.enqueue({ n: 2 }, { queue: "later" }));
      const sum = await enqueued(whole.enqueue(null, { dependsOn: [early, late] }));
      await firm.drain({ queues: "default" });
      await firm.clearFinishedJobs({ olderThan: new Date(Date.now() + 60_000) });
      expect(await firm.getJob(early)).toBeNull();
      expect((await firm.getJob(sum))?.state).toBe("pending");
      await firm.drain();
      expect(seen).toEqual([
        [
          { id: early, name: "part", state: "finished", result: 1 },
          { id: late, name: "part", state: "finished", result: 2 },
        ],
      ]);
      await firm.close();
      await env.reset();
    }
  });

  it("a dependent's own retries do not run its dependencies again", async () => {
    const firm = env.firm();
    let parts = 0;
    let tries = 0;
    const part = firm.defineJob("part", async () => void parts++);
    const whole = firm.defineJob(
      "whole",
      async () => {
        tries++;
        if (tries === 1) throw new Error("once");
      },
      { retry: { attempts: 2, backoff: 0 } },
    );
    const dep = await enqueued(part.enqueue(null));
    const id = await enqueued(whole.enqueue(null, { dependsOn: [dep] }));
    await firm.drain();
    expect({ parts, tries, state: (await firm.getJob(id))?.state }).toEqual({ parts: 1, tries: 2, state: "finished" });
  });
});
