import { expect, it } from "vitest";
import { silentLogger } from "../src/index.js";
import { describeEachDatabase, countRows, waitFor, enqueued } from "./support/harness.js";
import { claimForProcess, insertForeignProcess } from "./support/foreign-claims.js";
import type { ProcessInfo } from "../src/processes/hooks.js";

describeEachDatabase("crash recovery (in-process supervisor)", (env) => {
  const insertProcess = async (kind: string, heartbeatAgoMs: number) =>
    insertForeignProcess(await env.db(), heartbeatAgoMs, kind);
  const claimFor = async (jobId: number, processId: number) => claimForProcess(await env.db(), jobId, processId);

  it("prunes processes past the alive threshold and fails their claims with ProcessPrunedError; live ones are kept", async () => {
    const firm = env.firm();
    firm.defineJob("noop", async () => {});
    const [orphaned, kept] = await Promise.all([
      enqueued(firm.enqueue("elsewhere", null, { undeclared: true })),
      enqueued(firm.enqueue("elsewhere", null, { undeclared: true })),
    ]);
    const dead = await insertProcess("Worker", 10_000);
    const alive = await insertProcess("Worker", 0);
    await claimFor(orphaned, dead);
    await claimFor(kept, alive);
    const supervisor = await firm.start({
      workers: [{ queues: "nothing-here" }],
      processHeartbeatInterval: 200,
      processAliveThreshold: 5000,
    });
    try {
      const job = await firm.getJob(orphaned);
      expect(job).toMatchObject({ state: "failed", attempts: 1, error: { name: "ProcessPrunedError" } });
      expect(job!.error!.message).toContain("pid 999999");
      expect(await firm.getJob(kept)).toMatchObject({ state: "claimed", attempts: 0 });
      const ids = (await (await env.db()).selectFrom("firm_queue_processes").select("id").execute()).map((row) =>
        Number(row.id),
      );
      expect(ids).not.toContain(dead);
      expect(ids).toContain(alive);
    } finally {
      await supervisor.stop();
    }
  });

  it("keeps pruning while running: a process that stops heartbeating is pruned after the threshold", async () => {
    const firm = env.firm();
    const id = await enqueued(firm.enqueue("elsewhere", null, { undeclared: true }));
    const supervisor = await firm.start({
      workers: [{ queues: "nothing-here" }],
      processHeartbeatInterval: 100,
      processAliveThreshold: 1000,
    });
    try {
      const other = await insertProcess("Worker", 0);
      await claimFor(id, other);
      await waitFor(async () => (await firm.getJob(id))?.state === "failed", 10_000, "the silent process pruned");
      expect(await firm.getJob(id)).toMatchObject({ error: { name: "ProcessPrunedError" } });
    } finally {
      await supervisor.stop();
    }
  });

  it("at boot, fails claims whose process row is gone with ProcessMissingError", async () => {
    const firm = env.firm();
    const id = await enqueued(firm.enqueue("elsewhere", null, { undeclared: true }));
    await claimFor(id, 424_242);
    const supervisor = await firm.start({ workers: [{ queues: "nothing-here" }] });
    try {
      expect(await firm.getJob(id)).toMatchObject({
        state: "failed",
        attempts: 1,
        error: { name: "ProcessMissingError" },
      });
    } finally {
      await supervisor.stop();
    }
  });

  it("a worker whose row was pruned stops, cannot finish its job (stale-worker guard), and is replaced", async () => {
    const firm = env.firm();
    let release!: () => void;
    let handlerEnded = false;
    firm.defineJob("slow", async () => {
      await new Promise<void>((resolve) => (release = resolve));
      handlerEnded = true;
    });
    const id = await enqueued(firm.enqueue("slow", null));
    const supervisor = await firm.start({
      workers: [{ pollingInterval: 20 }],
      processHeartbeatInterval: 100,
      processAliveThreshold: 60_000,
    });
    try {
      const db = await env.db();
      // Its handler has begun once the claim is marked started (a run recovery counts as an attempt).
      const startedClaim = async () =>
        db
          .selectFrom("firm_queue_claimed_executions")
          .select("process_id")
          .where("job_id", "=", id)
          .where("started_at", "is not", null)
          .executeTakeFirst();
      await waitFor(async () => (await startedClaim()) !== undefined, 5000, "the claim marked started");
      const workerId = Number((await startedClaim())!.process_id);
      // What another supervisor's pruning does to a process it believes dead.
      const { pruneDeadProcesses } = await import("../src/processes/crash-recovery.js");
      // Its polls (every 20 ms) lock its row or claims for a moment on MariaDB, and pruning passes
      // over locked rows (SKIP LOCKED) until a later pass: prune until its claim has failed (its
      // heartbeat, every 100 ms, freshens the row meanwhile, so age it before each pass).
      await waitFor(
        async () => {
          await db
            .updateTable("firm_queue_processes")
            .set({ last_heartbeat_at: new Date(Date.now() - 120_000) })
            .where("id", "=", workerId)
            .execute();
          await pruneDeadProcesses(await firm.database(), (firm as any).policies, 60_000, supervisor.id);
          return (await firm.getJob(id))?.state === "failed";
        },
        5000,
        "the worker pruned",
      );
      expect(await firm.getJob(id)).toMatchObject({ state: "failed", error: { name: "ProcessPrunedError" } });
      // Its heartbeat notices; a fresh worker registers in its place.
      await waitFor(
        async () => {
          const workers = await db
            .selectFrom("firm_queue_processes")
            .select("id")
            .where("kind", "=", "Worker")
            .execute();
          return workers.length === 1 && Number(workers[0]!.id) !== workerId;
        },
        10_000,
        "a replacement worker",
      );
      release();
      await waitFor(() => handlerEnded, 5000, "the handler to end");
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await firm.getJob(id)).toMatchObject({ state: "failed", attempts: 1, finishedAt: null });
    } finally {
      release?.();
      await supervisor.stop();
    }
    expect(await countRows(await env.db(), "firm_queue_processes")).toBe(0);
  });

  it("runs lifecycle hooks in order with the process, and sends machinery errors and throwing hooks to onError", async () => {
    const events: string[] = [];
    const errors: string[] = [];
    const record = (name: string) => (info: ProcessInfo) => void events.push(`${name}:${info.kind}`);
    const firm = env.firm({
      logger: silentLogger,
      hooks: {
        onStart: record("start"),
        onStop: record("stop"),
        onExit: record("exit"),
        onWorkerStart: (info) => {
          events.push(`workerStart:${info.kind}:${info.supervisorId !== null}:${info.pid === process.pid}`);
          throw new Error("hook exploded");
        },
        onWorkerStop: record("workerStop"),
        onWorkerExit: record("workerExit"),
        onDispatcherStart: record("dispatcherStart"),
        onDispatcherStop: record("dispatcherStop"),
        onDispatcherExit: record("dispatcherExit"),
        onError: (error, context) => {
          errors.push(`${context.where}:${(error as Error).message}`);
          throw new Error("onError must not break anything either");
        },
      },
    });
    const supervisor = await firm.start({ processHeartbeatInterval: 200, processAliveThreshold: 5000 });
    await supervisor.stop();
    expect(events.length).toBe(9);
    // Roles stop side by side, so only each role's own order is fixed between stop and exit.
    expect(new Set(events.slice(4, 8))).toEqual(
      new Set(["workerStop:Worker", "workerExit:Worker", "dispatcherStop:Dispatcher", "dispatcherExit:Dispatcher"]),
    );
    expect(events.slice(0, 4)).toEqual([
      "start:Supervisor",
      "workerStart:Worker:true:true",
      "dispatcherStart:Dispatcher",
      "stop:Supervisor",
    ]);
    expect(events.at(-1)).toBe("exit:Supervisor");
    expect(events.indexOf("workerStop:Worker")).toBeLessThan(events.indexOf("workerExit:Worker"));
    expect(events.indexOf("dispatcherStop:Dispatcher")).toBeLessThan(events.indexOf("dispatcherExit:Dispatcher"));
    expect(errors).toEqual(["onWorkerStart hook:hook exploded"]);
  });

  it("an error in a poll goes to onError and the loop goes on", async () => {
    const errors: string[] = [];
    const firm = env.firm({
      hooks: {
        onError: (error, context) =>
          void errors.push(`${context.where}:${context.process?.kind}:${(error as Error).name}`),
      },
    });
    const db = await env.db();
    const supervisor = await firm.start({
      workers: [{ pollingInterval: 20 }],
      dispatchers: [],
      processHeartbeatInterval: 100,
      processAliveThreshold: 5000,
    });
    try {
      // Break claiming for a moment: the ready table is renamed away, then back.
      const { sql } = await import("kysely");
      const rename = (from: string, to: string) =>
        env.dialect === "mysql"
          ? sql.raw(`RENAME TABLE ${from} TO ${to}`).execute(db)
          : sql.raw(`ALTER TABLE ${from} RENAME TO ${to}`).execute(db);
      await rename("firm_queue_ready_executions", "firm_queue_ready_away");
      await waitFor(() => errors.length > 0, 10_000, "a poll error");
      await rename("firm_queue_ready_away", "firm_queue_ready_executions");
      expect(errors[0]).toMatch(/^worker poll:Worker:/);
      firm.defineJob("after", async () => {});
      const id = await enqueued(firm.enqueue("after", null));
      await waitFor(async () => (await firm.getJob(id))?.state === "finished", 10_000, "a job after the error");
    } finally {
      await supervisor.stop();
    }
  });
});
