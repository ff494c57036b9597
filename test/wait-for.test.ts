import BetterSqlite3 from "better-sqlite3";
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql, type LogEvent } from "kysely";
import mysql from "mysql2";
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import {
  ConfigurationError,
  FirmQueue,
  JobCancelledError,
  JobDeletedWhileAwaitedError,
  JobFailedError,
  JobNotFoundError,
  WaitTimeoutError,
  silentLogger,
} from "../src/index.js";
import { mysqlUri, sqliteFile } from "./support/app-handles.js";
import { countRows, describeEachDatabase, enqueued, waitFor } from "./support/harness.js";
import { spawnNode, stopProcesses, type Spawned } from "./support/processes.js";

/** The error a promise rejects with, or a failure when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.unreachable(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeEachDatabase("waitFor", (env) => {
  const running: Spawned[] = [];
  afterEach(() => stopProcesses(running));

  /** An instance that only enqueues and waits, and one that runs the jobs (by drain). */
  function pair(waiterOptions = {}, workerOptions = {}) {
    const waiter = env.firm({ waitPollInterval: 20, ...waiterOptions });
    const worker = env.firm(workerOptions);
    const define = (firm: typeof waiter) => ({
      double: firm.defineJob("double", async ({ n }: { n: number }) => ({ doubled: n * 2 })),
      boom: firm.defineJob(
        "boom",
        async () => {
          throw new TypeError("it went boom");
        },
        { retry: { attempts: 1 } },
      ),
    });
    return { waiter, worker, jobs: define(waiter), workerJobs: define(worker) };
  }

  it("resolves with the finished job and its result; the waiting instance runs no worker", async () => {
    const { waiter, worker, jobs } = pair();
    const id = await enqueued(jobs.double.enqueue({ n: 21 }));
    const waiting = waiter.waitFor(id);
    await sleep(50);
    await worker.drain();
    await expect(waiting).resolves.toEqual({ id, state: "finished", result: { doubled: 42 }, error: null });
    // A job that has already ended answers at once.
    await expect(waiter.waitFor(id, { timeout: "5s" })).resolves.toMatchObject({ id, result: { doubled: 42 } });
  });

  it("rejects with JobFailedError carrying the stored error when the job fails for good", async () => {
    const { waiter, worker, jobs } = pair();
    const id = await enqueued(jobs.boom.enqueue({}));
    const waiting = rejection(waiter.waitFor(id));
    await worker.drain();
    const error = await waiting;
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error).toMatchObject({ jobId: id, error: { name: "TypeError", message: "it went boom" } });
    expect((error as Error).message).toBe(`Job ${id} failed: TypeError: it went boom`);
  });

  it("rejects with JobCancelledError when the job is cancelled", async () => {
    const { waiter, worker, jobs } = pair();
    const id = await enqueued(jobs.double.enqueue({ n: 1 }, { wait: "1h" }));
    const waiting = rejection(waiter.waitFor(id));
    await worker.jobs.cancel(id);
    const error = await waiting;
    expect(error).toBeInstanceOf(JobCancelledError);
    expect(error).toMatchObject({ jobId: id });
  });

  it("rejects with WaitTimeoutError after the timeout, and the job goes on", async () => {
    const { waiter, worker, jobs } = pair();
    const id = await enqueued(jobs.double.enqueue({ n: 2 }));
    const error = await rejection(waiter.waitFor(id, { timeout: 60 }));
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(error).toMatchObject({ jobId: id, timeout: 60 });
    await worker.drain();
    expect(await waiter.getJob(id)).toMatchObject({ state: "finished", result: { doubled: 4 } });
  });

  it("gives up with the signal's reason when it aborts", async () => {
    const { waiter, jobs } = pair();
    const id = await enqueued(jobs.double.enqueue({ n: 2 }));
    const controller = new AbortController();
    const waiting = rejection(waiter.waitFor(id, { signal: controller.signal }));
    await sleep(30);
    controller.abort(new Error("the request went away"));
    expect(await waiting).toMatchObject({ message: "the request went away" });
    await expect(waiter.waitFor(id, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("an unknown id is a JobNotFoundError; bad ids and options are ConfigurationErrors", async () => {
    const { waiter, jobs } = pair();
    const error = await rejection(waiter.waitFor(987_654));
    expect(error).toBeInstanceOf(JobNotFoundError);
    expect(error).not.toBeInstanceOf(JobDeletedWhileAwaitedError);
    await expect(waiter.waitFor(0)).rejects.toBeInstanceOf(ConfigurationError);
    await expect(waiter.waitFor(1, { timeout: "soon" as never })).rejects.toThrow(/waitFor option timeout/);
    await expect(waiter.waitFor(1, { timeot: "1s" } as never)).rejects.toThrow(/waitFor option/);
    await expect(waiter.waitFor(1, { signal: {} as never })).rejects.toThrow(/AbortSignal/);
    // enqueueAndWait checks its wait options before it writes anything.
    await expect(jobs.double.enqueueAndWait({ n: 1 }, { timeout: -1 })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(jobs.double.enqueueAndWait({ n: 1 }, { transaction: {} } as never)).rejects.toThrow(
      /cannot take a transaction/,
    );
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
  });

  it("a job deleted while awaited (preserveFinishedJobs false) ends the wait with JobDeletedWhileAwaitedError", async () => {
    const { waiter, worker, jobs } = pair({}, { preserveFinishedJobs: false });
    const id = await enqueued(jobs.double.enqueue({ n: 3 }));
    const waiting = rejection(waiter.waitFor(id));
    // The waiter has seen the job waiting before the worker deletes it as it finishes.
    await sleep(80);
    await worker.drain();
    const error = await waiting;
    expect(error).toBeInstanceOf(JobDeletedWhileAwaitedError);
    expect(error).toBeInstanceOf(JobNotFoundError);
    expect((error as Error).message).toMatch(/deleted before its outcome could be read/);
  });

  it("enqueueAndWait enqueues and waits for the result", async () => {
    const { worker, jobs } = pair();
    const waiting = jobs.double.enqueueAndWait({ n: 5 }, { queue: "math", timeout: "10s" });
    await waitFor(async () => (await worker.drain()) > 0, 5_000, "the job to run");
    await expect(waiting).resolves.toMatchObject({ state: "finished", result: { doubled: 10 } });
  });

  it("close() rejects pending waits", async () => {
    const { waiter, jobs } = pair();
    const id = await enqueued(jobs.double.enqueue({ n: 5 }));
    const waiting = rejection(waiter.waitFor(id));
    await sleep(30);
    await waiter.close();
    expect(await waiting).toMatchObject({ name: "ClosedError" });
  });

  it("1,000 concurrent waiters in one process, jobs run by another: every waiter gets its result, in at most one poll per interval", {
    timeout: 120_000,
  }, async () => {
    const interval = 100;
    let polls = 0;
    const log = (event: LogEvent) => {
      if (event.level === "query" && event.query.sql.includes("failed_id")) polls++;
    };
    const url = env.url;
    const handle = new Kysely<unknown>({
      log,
      dialect:
        env.dialect === "postgres"
          ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 4 }) })
          : env.dialect === "mysql"
            ? new MysqlDialect({ pool: mysql.createPool({ uri: mysqlUri(url), connectionLimit: 4 }) })
            : new SqliteDialect({ database: new BetterSqlite3(sqliteFile(url)) }),
    });
    try {
      const waiter = new FirmQueue({
        logger: silentLogger,
        database: handle,
        waitPollInterval: interval,
        ...(env.dialect === "postgres" ? { listenUrl: url } : {}),
      });
      const double = waiter.declareJob<{ n: number }>("double");
      const boom = waiter.declareJob("boom", { retry: { attempts: 1 } });
      const results = await double.enqueueAll([...Array(990)].map((_, n) => ({ n })));
      const failing = await boom.enqueueAll([...Array(10)].map(() => null));
      const started = performance.now();
      const waits = [
        ...results.map((result) => waiter.waitFor(result.id!)),
        ...failing.map((result) => rejection(waiter.waitFor(result.id!))),
      ];
      const worker = spawnNode(["test/fixtures/wait-worker-process.mjs"], { FIRM_QUEUE_DATABASE_URL: url });
      running.push(worker);
      const ended = await Promise.all(waits);
      const elapsed = performance.now() - started;
      for (const [n, outcome] of ended.slice(0, 990).entries()) {
        expect(outcome).toEqual({ id: results[n]!.id, state: "finished", result: n * 2, error: null });
      }
      for (const error of ended.slice(990)) expect(error).toBeInstanceOf(JobFailedError);
      const intervals = Math.ceil(elapsed / interval);
      console.log(
        `[${env.dialect}] 1,000 waiters: ${polls} outcome queries in ${Math.round(elapsed)} ms (${intervals} intervals)`,
      );
      if (env.dialect === "postgres") {
        // Woken by notifications: queries come per announced batch of ended jobs, never one per waiter.
        expect(polls).toBeLessThan(1000 / 4);
      } else {
        expect(polls).toBeGreaterThan(0);
        expect(polls).toBeLessThanOrEqual(intervals + 1);
      }
      await waiter.close();
    } finally {
      await handle.destroy();
    }
  });
});

describeEachDatabase(
  "waitFor on PostgreSQL",
  (env) => {
    it("is woken by a notification, not the poll; a job nobody waits for sends none", async () => {
      const waiter = env.firm({ waitPollInterval: "1h" });
      const worker = env.firm();
      for (const firm of [waiter, worker]) firm.defineJob("double", async ({ n }: { n: number }) => n * 2);
      const listener = new pg.Client({ connectionString: env.url });
      await listener.connect();
      const heard: string[] = [];
      listener.on("notification", (message) => heard.push(message.payload ?? ""));
      await listener.query("LISTEN firm_queue_job_ended");
      try {
        const unwatched = await waiter.enqueue("double", { n: 1 });
        await worker.drain();
        const watched = await waiter.enqueue("double", { n: 2 });
        const waiting = waiter.waitFor(watched.id!);
        await waitFor(
          async () =>
            (
              await (
                await env.db()
              )
                .selectFrom("firm_queue_jobs")
                .select("id")
                .where("id", "=", watched.id!)
                .where(sql`awaited` as never)
                .execute()
            ).length === 1,
          5_000,
          "the flag",
        );
        await worker.drain();
        await expect(waiting).resolves.toMatchObject({ result: 4 });
        await waitFor(() => heard.length > 0, 5_000, "the notification");
        expect(heard).toEqual([String(watched.id)]);
        expect(heard).not.toContain(String(unwatched.id));
      } finally {
        await listener.end();
      }
    });
  },
  ["postgres"],
);
