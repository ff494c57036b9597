import { expect, it } from "vitest";
import { countRows, describeEachDatabaseAtOnce, enqueued } from "./support/harness.js";
import {
  isAlive,
  processRows,
  startSupervisor,
  waitForProcesses,
  waitWhile,
  type SupervisedRun,
} from "./support/supervised.js";

/** Whether the fixture's "sleep" handler has begun running job `id` (claimed is not enough: a stop
 * between claim and launch hands a job back unrun). */
function started(run: SupervisedRun, id: number): boolean {
  return run.jobEvents().some((line) => line.startsWith(`start ${id} `));
}

// Real processes and real signals: `firm-queue start` (fork mode) with the process-test config
// (heartbeat 300 ms, alive threshold 3 s, shutdown timeout 3 s), a worker and a dispatcher child.
describeEachDatabaseAtOnce("fork supervisor", (env) => {
  it("SIGKILL of a worker mid-job: the job fails with ProcessExitError at once, a new worker replaces it, other jobs run", async () => {
    const firm = env.firm();
    const db = await env.db();
    const run = startSupervisor(env);
    try {
      const before = await waitForProcesses(db, run);
      const worker = before.find((row) => row.kind === "Worker")!;
      const slow = await enqueued(firm.enqueue("sleep", { ms: 60_000 }, { undeclared: true }));
      await waitWhile(run, () => started(run, slow), "the slow job started");
      process.kill(worker.pid, "SIGKILL");
      // At once, not after the alive threshold: well under the 3 s it would take to prune.
      await waitWhile(run, async () => (await firm.getJob(slow))?.state === "failed", "the killed job failed");
      const failed = await firm.getJob(slow);
      expect(failed).toMatchObject({ state: "failed", attempts: 1, error: { name: "ProcessExitError" } });
      expect(failed!.error!.message).toContain(`pid ${worker.pid}`);
      expect(failed!.error!.message).toContain("SIGKILL");
      const after = await waitForProcesses(db, run);
      const replacement = after.find((row) => row.kind === "Worker")!;
      expect(replacement.pid).not.toBe(worker.pid);
      expect(replacement.supervisorId).toBe(before.find((row) => row.kind === "Supervisor")!.id);
      const others = await Promise.all([
        enqueued(firm.enqueue("record", null, { undeclared: true })),
        enqueued(firm.enqueue("record", null, { undeclared: true })),
      ]);
      await waitWhile(
        run,
        async () => {
          const jobs = await Promise.all(others.map((id) => firm.getJob(id)));
          return jobs.every((job) => job?.state === "finished");
        },
        "the other jobs finished",
      );
      expect(run.jobEvents()).toEqual(
        expect.arrayContaining([`done ${others[0]} ${replacement.pid}`, `done ${others[1]} ${replacement.pid}`]),
      );
    } finally {
      run.child.kill("SIGTERM");
    }
    expect((await run.finished).code).toBe(0);
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
  });

  it("SIGKILL of the supervisor: children finish their jobs in flight, deregister and exit", async () => {
    const firm = env.firm();
    const db = await env.db();
    const run = startSupervisor(env);
    const rows = await waitForProcesses(db, run);
    const children = rows.filter((row) => row.kind !== "Supervisor");
    const id = await enqueued(firm.enqueue("sleep", { ms: 1500 }, { undeclared: true }));
    await waitWhile(run, () => started(run, id), "the job started");
    run.child.kill("SIGKILL");
    await waitWhile(run, () => children.every((child) => !isAlive(child.pid)), "every child exited", 20_000);
    expect(await firm.getJob(id)).toMatchObject({ state: "finished", attempts: 1 });
    // The children deregistered; only the dead supervisor's row is left, for pruning.
    expect((await processRows(db)).map((row) => row.kind)).toEqual(["Supervisor"]);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
  });

  it("TERM (sent three times) with jobs in flight: they finish, hooks run in order, exit 0, no rows left", async () => {
    const firm = env.firm();
    const db = await env.db();
    const run = startSupervisor(env);
    const rows = await waitForProcesses(db, run);
    const ids = await Promise.all([
      enqueued(firm.enqueue("sleep", { ms: 1200 }, { undeclared: true })),
      enqueued(firm.enqueue("sleep", { ms: 1200 }, { undeclared: true })),
    ]);
    await waitWhile(run, () => ids.every((id) => started(run, id)), "both jobs started");
    for (let i = 0; i < 3; i++) run.child.kill("SIGTERM");
    const result = await run.finished;
    expect(result.code, run.output()).toBe(0);
    for (const id of ids) expect(await firm.getJob(id)).toMatchObject({ state: "finished", attempts: 1 });
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
    const pid = (kind: string) => rows.find((row) => row.kind === kind)!.pid;
    const events = run.hookEvents();
    // Each process runs its own hooks in order; the supervisor's bracket its children's.
    const of = (kind: string) =>
      events.filter((line) => line.endsWith(` ${kind} ${pid(kind)}`)).map((line) => line.split(" ")[0]);
    expect(of("Supervisor")).toEqual(["onStart", "onStop", "onExit"]);
    expect(of("Worker")).toEqual(["onWorkerStart", "onWorkerStop", "onWorkerExit"]);
    expect(of("Dispatcher")).toEqual(["onDispatcherStart", "onDispatcherStop", "onDispatcherExit"]);
    const at = (line: string) => events.indexOf(line);
    expect(at(`onStart Supervisor ${pid("Supervisor")}`)).toBeLessThan(at(`onWorkerStart Worker ${pid("Worker")}`));
    expect(at(`onStop Supervisor ${pid("Supervisor")}`)).toBeLessThan(at(`onWorkerStop Worker ${pid("Worker")}`));
    expect(at(`onWorkerExit Worker ${pid("Worker")}`)).toBeLessThan(at(`onExit Supervisor ${pid("Supervisor")}`));
    // The jobs ended before the worker stopped.
    const jobs = run.jobEvents();
    for (const id of ids) expect(jobs).toContain(`done ${id} ${pid("Worker")}`);
  });

  it("TERM past the shutdown timeout: the job goes back to ready without an attempt counted, exit 0", async () => {
    const firm = env.firm();
    const db = await env.db();
    const run = startSupervisor(env, ["--shutdown-timeout", "500ms"]);
    await waitForProcesses(db, run);
    const id = await enqueued(firm.enqueue("sleep", { ms: 60_000 }, { undeclared: true }));
    await waitWhile(run, () => started(run, id), "the job started");
    run.child.kill("SIGTERM");
    const result = await run.finished;
    expect(result.code, run.output()).toBe(0);
    expect(await firm.getJob(id)).toMatchObject({ state: "ready", attempts: 0 });
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
  });

  it("QUIT: claimed jobs go straight back to ready, exit 0, no rows left", async () => {
    const firm = env.firm();
    const db = await env.db();
    // A long shutdown timeout that QUIT must not wait for.
    const run = startSupervisor(env, ["--shutdown-timeout", "60s"]);
    await waitForProcesses(db, run);
    const id = await enqueued(firm.enqueue("sleep", { ms: 60_000 }, { undeclared: true }));
    await waitWhile(run, () => started(run, id), "the job started");
    run.child.kill("SIGQUIT");
    const result = await run.finished;
    expect(result.code, run.output()).toBe(0);
    expect(await firm.getJob(id)).toMatchObject({ state: "ready", attempts: 0 });
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
  });

  it("a worker that misses its heartbeats is pruned (ProcessPrunedError); once resumed it cannot finish the job, stops and is replaced", async () => {
    const firm = env.firm();
    const db = await env.db();
    // Enqueued first and a long polling interval: the worker claims it at its first poll and then
    // sits idle, so SIGSTOP does not freeze it inside a transaction (that would hold locks).
    const id = await enqueued(firm.enqueue("sleep", { ms: 1000 }, { undeclared: true }));
    const run = startSupervisor(env, ["--polling-interval", "10s"]);
    try {
      const rows = await waitForProcesses(db, run);
      const worker = rows.find((row) => row.kind === "Worker")!;
      await waitWhile(run, async () => run.jobEvents().includes(`start ${id} ${worker.pid}`), "the job started");
      process.kill(worker.pid, "SIGSTOP");
      try {
        await waitWhile(
          run,
          async () => (await firm.getJob(id))?.state === "failed",
          "the stopped worker pruned",
          30_000,
        );
      } finally {
        process.kill(worker.pid, "SIGCONT");
      }
      expect(await firm.getJob(id)).toMatchObject({
        state: "failed",
        attempts: 1,
        error: { name: "ProcessPrunedError" },
      });
      // The resumed worker finds its row gone and exits; a fresh worker takes its place.
      await waitWhile(run, () => !isAlive(worker.pid), "the pruned worker exited");
      const after = await waitForProcesses(db, run);
      expect(after.find((row) => row.kind === "Worker")!.pid).not.toBe(worker.pid);
      // Whether or not its handler ran to the end, the stale worker recorded nothing.
      expect(await firm.getJob(id)).toMatchObject({ state: "failed", attempts: 1, finishedAt: null });
    } finally {
      run.child.kill("SIGTERM");
    }
    expect((await run.finished).code).toBe(0);
  });

  it("async mode from the CLI runs every role in one process and stops cleanly on INT", async () => {
    const firm = env.firm();
    const db = await env.db();
    const run = startSupervisor(env, ["--mode", "async", "--processes", "2"]);
    const rows = await waitForProcesses(db, run, { workers: 2 });
    expect(new Set(rows.map((row) => row.pid))).toEqual(new Set([run.child.pid]));
    const id = await enqueued(firm.enqueue("sleep", { ms: 500 }, { undeclared: true }));
    await waitWhile(run, () => started(run, id), "the job started");
    run.child.kill("SIGINT");
    expect((await run.finished).code).toBe(0);
    expect(await firm.getJob(id)).toMatchObject({ state: "finished" });
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
  });

  it("Ctrl-C in a terminal (INT to the whole process group): jobs in flight finish, nothing is lost, exit 0", async () => {
    const firm = env.firm();
    const db = await env.db();
    const run = startSupervisor(env, [], {}, { detached: true });
    await waitForProcesses(db, run);
    const running = await enqueued(firm.enqueue("sleep", { ms: 1000 }, { undeclared: true }));
    await waitWhile(run, () => started(run, running), "the job started");
    const waiting = await enqueued(firm.enqueue("sleep", { ms: 10 }, { undeclared: true, wait: "1h" }));
    process.kill(-run.child.pid!, "SIGINT");
    const result = await run.finished;
    expect(result.code, run.output()).toBe(0);
    expect(await firm.getJob(running)).toMatchObject({ state: "finished", attempts: 1 });
    expect(await firm.getJob(waiting)).toMatchObject({ state: "scheduled", attempts: 0 });
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
  });
});
