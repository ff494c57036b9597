import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Logger } from "../src/logger.js";
import { retryStart } from "../src/supervisor/start-retry.js";
import type { KyselyPlugin } from "kysely";
import type { Database } from "../src/database/connection.js";
import type { Db } from "../src/database/dialect.js";
import { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRegistry } from "../src/definitions/job-registry.js";
import { resolveJobOptions } from "../src/definitions/job-definition.js";
import { resolveRecurringTasks } from "../src/definitions/recurring-task.js";
import { roleDefinition } from "../src/supervisor/role-table.js";
import { silentLogger } from "../src/index.js";
import { HookSet } from "../src/processes/hooks.js";
import { RegisteredRole } from "../src/supervisor/registered-role.js";
import { describeEachDatabase, enqueued, waitFor, type TestEnv } from "./support/harness.js";
import { runCli } from "./support/processes.js";
import { PROCESS_CONFIG, startSupervisor, waitForProcesses, waitWhile } from "./support/supervised.js";
import { TcpProxy } from "./support/tcp-proxy.js";

// A start's database steps (connecting, each process's registration) retry a connection error for
// a while instead of failing the boot (src/supervisor/start-retry.ts); any other error still fails
// the start at once.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A logger keeping its warnings, for assertions. */
function recordingLogger(): Logger & { readonly warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} };
}

const fault = (code: string) => Object.assign(new Error(`fault ${code}`), { code });
const QUICK = { firstDelay: 5, longestDelay: 20, giveUpAfter: 200 };

describe("retryStart", () => {
  it("tries a step again while it fails with a connection error, warning each time with the attempt and the wait", async () => {
    const logger = recordingLogger();
    const errors = [fault("ECONNRESET"), fault("SQLITE_BUSY"), fault("57P03")];
    const attempts: number[] = [];
    const result = await retryStart(
      "registering the worker process",
      logger,
      async (attempt) => {
        attempts.push(attempt);
        const error = errors.shift();
        if (error) throw error;
        return 42;
      },
      QUICK,
    );
    expect(result).toBe(42);
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect(logger.warnings).toHaveLength(3);
    for (const [index, warning] of logger.warnings.entries()) {
      expect(warning).toMatch(
        new RegExp(
          `^registering the worker process failed with a transient error \\(attempt ${index + 1}\\): fault \\w+; next try in \\d+ ms, giving up \\d+ s from now$`,
        ),
      );
    }
  });

  it("throws any other error at once", async () => {
    const logger = recordingLogger();
    let calls = 0;
    const denied = fault("ER_ACCESS_DENIED_ERROR");
    const step = retryStart(
      "connecting to the database",
      logger,
      async () => {
        calls++;
        throw denied;
      },
      QUICK,
    );
    await expect(step).rejects.toBe(denied);
    expect(calls).toBe(1);
    expect(logger.warnings).toEqual([]);
  });

  it("gives up with the last connection error once its time is spent", async () => {
    const logger = recordingLogger();
    let calls = 0;
    const step = retryStart(
      "registering the dispatcher process",
      logger,
      async () => {
        calls++;
        throw fault("ECONNREFUSED");
      },
      QUICK,
    );
    await expect(step).rejects.toMatchObject({ code: "ECONNREFUSED" });
    expect(calls).toBeGreaterThan(1);
    expect(logger.warnings).toHaveLength(calls - 1);
  });
});

/**
 * A passing database fault at a process's start, switched on and off by the test. PostgreSQL and
 * MariaDB: a proxy in front of the server resets every new connection (existing ones keep
 * passing). SQLite has no connection to reset or refuse (its file opens or it does not): its
 * passing fault is another connection holding the write lock past the busy timeout (5 s), which
 * fails a registration with SQLITE_BUSY.
 */
interface StartFault {
  /** The database URL the processes under test use. */
  readonly url: string;
  on(): void;
  off(): void;
}

async function startFault(env: TestEnv): Promise<StartFault> {
  if (env.dialect === "sqlite") {
    const holder = new BetterSqlite3(env.url.replace(/^sqlite:/, ""));
    cleanups.push(() => void holder.close());
    return {
      url: env.url,
      on: () => void holder.exec("BEGIN IMMEDIATE"),
      off: () => void holder.exec("COMMIT"),
    };
  }
  const target = new URL(env.url);
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
  cleanups.push(() => proxy.close());
  return {
    url: proxy.rewrite(env.url),
    on: () => proxy.setMode("refuse"),
    off: () => proxy.setMode("pass"),
  };
}

describeEachDatabase("a registration whose answer was lost", (env) => {
  it("is tried again without leaving the row the lost answer committed", async () => {
    const firm = env.firm();
    const database = await firm.database();
    // The first INSERT into the processes table commits, then its answer is lost (as when the
    // connection drops between the COMMIT and the reply).
    let lost = 0;
    const registrations = new Set<unknown>();
    const loseFirstRegistration: KyselyPlugin = {
      transformQuery: (args) => {
        const node = args.node as { kind: string; into?: { table?: { identifier?: { name?: string } } } };
        if (node.kind === "InsertQueryNode" && node.into?.table?.identifier?.name === "firm_queue_processes")
          registrations.add(args.queryId);
        return args.node;
      },
      transformResult: async (args) => {
        if (registrations.has(args.queryId) && lost === 0) {
          lost++;
          throw fault("ECONNRESET");
        }
        return args.result;
      },
    };
    const flaky: Database = Object.create(database, { db: { value: database.db.withPlugin(loseFirstRegistration) } });
    const logger = recordingLogger();
    const role = await RegisteredRole.register(
      { kind: "Worker", supervisorId: null, metadata: {} },
      {
        database: flaky,
        policies: new JobPolicies(new JobRegistry(), silentLogger),
        hooks: new HookSet(silentLogger),
        logger,
        heartbeatInterval: 60_000,
        onLost: () => {},
      },
    );
    cleanups.push(() => role.stop(1000));
    expect(lost).toBe(1);
    expect(logger.warnings).toEqual([expect.stringMatching(/registering the worker process failed .*attempt 1/)]);
    const rows = await database.db.selectFrom("firm_queue_processes").select(["id", "name"]).execute();
    expect(rows).toEqual([{ id: role.info.id, name: role.info.name }]);
  });
});

describeEachDatabase("a scheduler whose start-up sync meets a connection error", (env) => {
  it("syncs its tasks on the next try, with a warning", async () => {
    const firm = env.firm();
    const database = await firm.database();
    // The first statement on the recurring tasks table fails as a dropped connection would.
    let dropped = 0;
    const dropFirstSync: KyselyPlugin = {
      transformQuery: (args) => {
        if (dropped === 0 && JSON.stringify(args.node).includes('"firm_queue_recurring_tasks"')) {
          dropped++;
          throw fault("ECONNRESET");
        }
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    // The sync runs in a write transaction: the fault comes inside it, after its BEGIN.
    const flaky: Database = Object.create(database, {
      writeTransaction: {
        value: <T>(work: (trx: Db) => Promise<T>) =>
          database.writeTransaction((trx) => work(trx.withPlugin(dropFirstSync))),
      },
    });
    const logger = recordingLogger();
    const registry = new JobRegistry();
    registry.add({ name: "tick", handler: async () => {}, options: resolveJobOptions("tick", {}) });
    const policies = new JobPolicies(registry, silentLogger);
    const staticTasks = resolveRecurringTasks({ nightly: { job: "tick", schedule: "0 3 * * *" } }, registry.names());
    const spec = { role: "scheduler", settings: { dynamicTasks: false, pollingInterval: 5000, staticTasks } } as const;
    const role = await RegisteredRole.register(
      { kind: "Scheduler", supervisorId: null, metadata: {} },
      { database, policies, hooks: new HookSet(silentLogger), logger, heartbeatInterval: 60_000, onLost: () => {} },
    );
    // The scheduler as a supervisor makes it, on the flaky database.
    const scheduler = roleDefinition(spec).create(spec.settings, {
      database: flaky,
      registry,
      policies,
      processId: role.info.id,
      preserveFinishedJobs: true,
      clearFinishedJobsAfter: null,
      logger,
      onError: (error) => logger.error("scheduler error", { error }),
    });
    cleanups.push(() => role.stop(1000));
    await role.begin(scheduler);
    expect(dropped).toBe(1);
    expect(logger.warnings).toEqual([
      expect.stringMatching(/^preparing the scheduler failed with a transient error \(attempt 1\)/),
    ]);
    const rows = await database.db.selectFrom("firm_queue_recurring_tasks").select(["key", "schedule"]).execute();
    expect(rows).toEqual([{ key: "nightly", schedule: "0 3 * * *" }]);
  });
});

describeEachDatabase("a start during a passing database fault", (env) => {
  it("fork mode: a child whose first database step fails retries with warnings, registers and runs jobs", async () => {
    const fault = await startFault(env);
    const hold = mkdtempSync(join(tmpdir(), "firm-queue-hold-"));
    const run = startSupervisor(env, [], { FIRM_QUEUE_DATABASE_URL: fault.url, HOLD_CHILDREN_AT_LOAD: hold });
    // A start that failed stops the wait at once.
    const whileUp = (check: () => boolean) => () => {
      if (run.child.exitCode !== null) throw new Error(`firm-queue start exited with ${run.child.exitCode}`);
      return check();
    };
    try {
      // The supervisor is up; its children are loading the job modules and have not used the database yet.
      await waitWhile(
        run,
        whileUp(() => existsSync(join(hold, "waiting"))),
        "a child paused before connecting",
      );
      fault.on();
      writeFileSync(join(hold, "go"), "");
      // A child's warning (not the supervisor's): its first connection or its registration failed.
      const childRetry = new RegExp(
        `firm-queue\\[(?!${run.child.pid}\\])\\d+\\] (connecting to the database|registering the (worker|dispatcher) process) ` +
          "failed with a transient error \\(attempt 1\\): .+; next try in \\d+ ms",
      );
      await waitWhile(
        run,
        whileUp(() => childRetry.test(run.output())),
        "a child's warning that it retries",
      );
      fault.off();
      const rows = await waitForProcesses(await env.db(), run);
      const worker = rows.find((row) => row.kind === "Worker")!;
      const firm = env.firm();
      const id = await enqueued(firm.enqueue("record", null, { undeclared: true }));
      await waitWhile(run, async () => (await firm.getJob(id))?.state === "finished", "a job run by the worker");
      expect(run.jobEvents()).toContain(`done ${id} ${worker.pid}`);
    } finally {
      run.child.kill("SIGTERM");
    }
    const finished = await run.finished;
    expect(finished.code, run.output()).toBe(0);
    expect(run.output()).not.toContain("could not start");
  });

  it("async mode: a start whose first database step fails retries with warnings, then starts and runs jobs", async () => {
    const fault = await startFault(env);
    fault.on();
    const logger = recordingLogger();
    const firm = env.firm({ databaseUrl: fault.url, logger });
    firm.defineJob("noop", async () => "ran");
    let failure: unknown;
    const starting = firm.start({ workers: [{ queues: "*", pollingInterval: 50 }], dispatchers: [] });
    starting.catch((error: unknown) => (failure = error));
    // Connecting, on PostgreSQL and MariaDB; the supervisor's registration (a write), on SQLite.
    await waitFor(
      () => {
        if (failure) throw failure;
        return logger.warnings.some((warning) => /failed with a transient error \(attempt 1\)/.test(warning));
      },
      30_000,
      "the supervisor's warning that it retries",
    );
    fault.off();
    const supervisor = await starting;
    cleanups.push(() => supervisor.stop({ immediate: true }));
    const id = await enqueued(firm.enqueue("noop", null));
    await waitFor(async () => (await firm.getJob(id))?.state === "finished", 30_000, "the job run");
  });
});

describeEachDatabase(
  "a start with a database user that does not exist",
  (env) => {
    it("fails at once, without retrying", async () => {
      const url = new URL(env.url);
      url.username = "no_such_user";
      url.password = "";
      const result = await runCli(["start", "--config", PROCESS_CONFIG], { FIRM_QUEUE_DATABASE_URL: url.href });
      const output = result.stdout + result.stderr;
      expect(result.code, output).toBe(1);
      expect(output).toContain("the supervisor could not start");
      expect(output).toContain("no_such_user");
      expect(output).not.toContain("transient error");
    });
  },
  // SQLite has no users.
  ["postgres", "mysql"],
);

describeEachDatabase("a start on a database never migrated", (env) => {
  it("fails at once with the migrate hint, without retrying", async () => {
    const result = await runCli(["start", "--config", PROCESS_CONFIG], {
      FIRM_QUEUE_DATABASE_URL: env.url,
      FIRM_QUEUE_TABLE_PREFIX: "never_",
    });
    const output = result.stdout + result.stderr;
    expect(result.code, output).toBe(1);
    expect(output).toContain('run "firm-queue migrate"');
    expect(output).not.toContain("transient error");
  });
});
