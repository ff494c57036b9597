import { expect, test } from "vitest";
import { formatJobDetail } from "../src/cli/job-detail.js";
import { ConfigurationError, InvalidCursorError } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";

describeEachDatabase("firm.inspect: dependencies and batches", (env) => {
  test("a job's detail lists its dependencies in dependsOn order and its dependents, with states, capped with counts", async () => {
    const firm = env.firm();
    const step = firm.defineJob("step", async () => {});
    const join = firm.defineJob("join", async () => {}, { queue: "joins" });
    const a = (await step.enqueue({ n: "a" })).id;
    const b = (await step.enqueue({ n: "b" }, { queue: "later" })).id;
    const c = (await join.enqueue({}, { dependsOn: [b, a] })).id;
    const fans: number[] = [];
    for (let index = 0; index < 4; index += 1) fans.push((await join.enqueue({ index }, { dependsOn: [a] })).id);

    const detail = (await firm.inspect.job(c))!;
    expect(detail.state).toBe("pending");
    expect(detail.dependencies).toEqual([
      { id: b, name: "step", state: "ready" },
      { id: a, name: "step", state: "ready" },
    ]);
    expect(detail.dependencyCount).toBe(2);
    expect(detail.dependents).toEqual([]);
    expect(detail.dependentCount).toBe(0);
    expect(detail.batch).toBeUndefined();
    // `firm-queue jobs show` prints the same.
    expect(formatJobDetail(detail, new Date())).toMatch(
      new RegExp(`^dependencies:\\s+2: ${b} step ready, ${a} step ready$`, "m"),
    );
    expect(formatJobDetail(detail, new Date())).not.toMatch(/^(dependents|batch):/m);

    const fanned = (await firm.inspect.job(a))!;
    expect(fanned.dependents).toEqual([c, ...fans].map((id) => ({ id, name: "join", state: "pending" })));
    expect(fanned.dependentCount).toBe(5);
    expect(fanned.dependencies).toEqual([]);
    expect(formatJobDetail(fanned, new Date())).toMatch(new RegExp(`^dependents:\\s+5: ${c} join pending, `, "m"));
    const capped = (await firm.inspect.job(a, { related: 2 }))!;
    expect(capped.dependents.map((job) => job.id)).toEqual([c, fans[0]]);
    expect(capped.dependentCount).toBe(5);
    const cappedDeps = (await firm.inspect.job(c, { related: 1 }))!;
    expect(cappedDeps.dependencies.map((job) => job.id)).toEqual([b]);
    expect(cappedDeps.dependencyCount).toBe(2);

    // Once `a` has finished: its dependents see it finished; `c` still waits for `b`.
    await firm.drain({ queues: "default" });
    expect((await firm.inspect.job(c))!.dependencies).toEqual([
      { id: b, name: "step", state: "ready" },
      { id: a, name: "step", state: "finished" },
    ]);
    expect((await firm.inspect.job(a))!.dependents.map((job) => job.state)).toEqual([
      "pending",
      "ready",
      "ready",
      "ready",
      "ready",
    ]);
    // A dependency whose row is gone keeps its name, and reads as deleted.
    await firm.clearFinishedJobs({ olderThan: 0 });
    expect(await firm.getJob(a)).toBeNull();
    expect((await firm.inspect.job(c))!.dependencies).toEqual([
      { id: b, name: "step", state: "ready" },
      { id: a, name: "step", state: "deleted" },
    ]);

    await expect(firm.inspect.job(c, { related: 0 })).rejects.toThrow(ConfigurationError);
    await expect(firm.inspect.job(c, { related: 1001 })).rejects.toThrow(/at most 1000/);
    await expect(firm.inspect.job(c, { limit: 5 } as never)).rejects.toThrow(/Unknown inspect.job option "limit"/);
  });

  test("batches are listed newest first page by page; one batch has its counts, callbacks and a page of its jobs", async () => {
    const firm = env.firm();
    firm.defineJob("resize", async (args: { photo: number }) => {
      if (args.photo === 3) throw new Error("bad photo");
    });
    firm.defineJob("notify", async () => {});
    const first = await firm.batch(
      [1, 2].map((photo) => ({ name: "resize", args: { photo } })),
      { onFinish: { name: "notify", args: { album: "one" } } },
    );
    const second = await firm.batch(
      [3, 4, 5].map((photo) => ({ name: "resize", args: { photo }, options: { queue: "photos" } })),
      { onSuccess: { name: "notify", args: { album: "two", at: new Date("2026-01-02T00:00:00Z") } } },
    );
    const third = await firm.batch([{ name: "resize", args: { photo: 6 } }]);

    const page1 = await firm.inspect.batches({ limit: 2 });
    expect(page1.batches.map((batch) => batch.id)).toEqual([third.id, second.id]);
    expect(page1.batches[1]).toEqual({
      id: second.id,
      state: "pending",
      total: 3,
      pending: 3,
      finished: 0,
      failed: 0,
      cancelled: 0,
      createdAt: expect.any(Date),
      endedAt: null,
    });
    const page2 = await firm.inspect.batches({ limit: 2, cursor: page1.nextCursor });
    expect(page2.batches.map((batch) => batch.id)).toEqual([first.id]);
    expect(page2.nextCursor).toBeNull();
    expect((await firm.inspect.batches()).batches).toHaveLength(3);

    const pending = (await firm.inspect.batch(second.id, { limit: 2 }))!;
    expect(pending).toMatchObject({ id: second.id, state: "pending", total: 3, pending: 3, endedAt: null });
    expect(pending.callbacks).toEqual({
      onSuccess: {
        name: "notify",
        arguments: { album: "two", at: new Date("2026-01-02T00:00:00Z") },
        queue: "default",
        priority: 0,
      },
      onFailure: null,
      onFinish: null,
    });
    expect(pending.jobs).toEqual(
      second.jobs.slice(0, 2).map((job) => ({ id: job.id, name: "resize", state: "ready", ended: null })),
    );
    const rest = (await firm.inspect.batch(second.id, { limit: 2, cursor: pending.nextCursor }))!;
    expect(rest.jobs.map((job) => job.id)).toEqual([second.jobs[2]!.id]);
    expect(rest.nextCursor).toBeNull();

    await firm.drain({ queues: "*" });
    const ended = (await firm.inspect.batch(second.id))!;
    expect(ended).toMatchObject({ state: "failed", total: 3, pending: 0, finished: 2, failed: 1, cancelled: 0 });
    expect(ended.endedAt).toBeInstanceOf(Date);
    expect(ended.jobs.map((job) => [job.state, job.ended])).toEqual([
      ["failed", "failed"],
      ["finished", "finished"],
      ["finished", "finished"],
    ]);
    const done = (await firm.inspect.batch(first.id))!;
    expect(done).toMatchObject({ state: "finished", finished: 2 });
    expect(done.callbacks.onFinish).toMatchObject({ name: "notify", arguments: { album: "one" } });

    // A job's detail names its batch, and whether it is one of its jobs or its callback.
    expect((await firm.inspect.job(first.jobs[0]!.id!))!.batch).toEqual({
      id: first.id,
      state: "finished",
      callback: false,
    });
    const callback = (await firm.inspect.jobs({ state: "finished", name: "notify" })).jobs;
    expect(callback).toHaveLength(1);
    expect((await firm.inspect.job(callback[0]!.id))!.batch).toEqual({
      id: first.id,
      state: "finished",
      callback: true,
    });

    // The cleanup deletes a job's membership with its row: a clear of one job name leaves the batch
    // and its counts, without those jobs.
    await firm.clearFinishedJobs({ olderThan: 0, name: "resize" });
    const cleared = (await firm.inspect.batch(first.id))!;
    expect(cleared).toMatchObject({ state: "finished", total: 2, finished: 2 });
    expect(cleared.jobs).toEqual([]);
    // A clear of every name deletes the ended batches it left without jobs, and inspect says so.
    await firm.clearFinishedJobs({ olderThan: 0 });
    expect(await firm.inspect.batch(first.id)).toBeNull();
    expect((await firm.inspect.batches()).batches.map((batch) => batch.id)).not.toContain(first.id);

    // A job deleted as it finished (preserveFinishedJobs: false) keeps its membership: it reads as
    // deleted, with how the batch counted its end.
    const deleting = env.firm({ preserveFinishedJobs: false });
    deleting.defineJob("resize", async () => {});
    const gone = await deleting.batch([7, 8].map((photo) => ({ name: "resize", args: { photo } })));
    await deleting.drain({ queues: "*" });
    expect((await deleting.inspect.batch(gone.id))!.jobs).toEqual(
      gone.jobs.map((job) => ({ id: job.id, name: null, state: "deleted", ended: "finished" })),
    );

    expect(await firm.inspect.batch(123456789)).toBeNull();
    for (const bad of [0, -1, 1.5, "1", 2 ** 53])
      await expect(firm.inspect.batch(bad as number)).rejects.toThrow(ConfigurationError);
    await expect(firm.inspect.batches({ cursor: "nonsense" })).rejects.toThrow(InvalidCursorError);
    await expect(firm.inspect.batch(first.id, { cursor: "WzBd" })).rejects.toThrow(InvalidCursorError);
    await expect(firm.inspect.batches({ limit: 501 })).rejects.toThrow(/at most 500/);
    await expect(firm.inspect.batches({ state: "failed" } as never)).rejects.toThrow(ConfigurationError);
  });
});
