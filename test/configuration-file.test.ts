import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveCliConfig } from "../src/cli/config.js";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { ROOT, runCli, spawnCli } from "./support/processes.js";
import { processRows, startSupervisor, waitForProcesses } from "./support/supervised.js";

const FULL = "test/fixtures/config/full.config.mjs";

describe("configuration file, environment and flags", () => {
  it("reads every key of a config module, jobs relative to the file", async () => {
    const config = await resolveCliConfig({ config: FULL }, {}, ROOT);
    expect(config.file).toBe(resolve(ROOT, FULL));
    expect(config.databaseUrl).toBe("sqlite:from-config.sqlite3");
    expect(config.jobs).toEqual([resolve(ROOT, "test/fixtures/process-jobs.ts")]);
    expect(config.logLevel).toBe("warn");
    expect(config.logFormat).toBe("json");
    expect(config.start).toMatchObject({
      mode: "async",
      shutdownTimeout: 10_000,
      processHeartbeatInterval: 30_000,
      processAliveThreshold: 120_000,
      workers: [
        { queues: ["critical", "default"], concurrency: 2, processes: 2, pollingInterval: 250 },
        { queues: "reports*", concurrency: 1, processes: 1, pollingInterval: 100 },
      ],
      dispatchers: [{ pollingInterval: 2000, batchSize: 100 }],
    });
  });

  it("FIRM_QUEUE_* variables override the file, and flags override both", async () => {
    const env = {
      FIRM_QUEUE_MODE: "fork",
      FIRM_QUEUE_CONCURRENCY: "7",
      FIRM_QUEUE_SHUTDOWN_TIMEOUT: "1s",
      FIRM_QUEUE_DATABASE_URL: "sqlite:env.sqlite3",
    };
    const fromEnv = await resolveCliConfig({ config: FULL }, env, ROOT);
    expect(fromEnv.start.mode).toBe("fork");
    expect(fromEnv.start.workers.map((worker) => worker.concurrency)).toEqual([7, 7]);
    expect(fromEnv.start.shutdownTimeout).toBe(1000);
    expect(fromEnv.databaseUrl).toBe("sqlite:env.sqlite3");
    // --log-format puts its value in FIRM_QUEUE_LOG_FORMAT before the config is read.
    expect((await resolveCliConfig({ config: FULL }, { FIRM_QUEUE_LOG_FORMAT: "text" }, ROOT)).logFormat).toBe("text");
    const fromFlags = await resolveCliConfig(
      {
        config: FULL,
        mode: "async",
        concurrency: "9",
        queues: "a,b*",
        processes: "3",
        require: ["x.ts"],
        processAliveThreshold: "10m",
      },
      env,
      ROOT,
    );
    expect(fromFlags.start.mode).toBe("async");
    expect(fromFlags.start.workers.map((worker) => [worker.queues, worker.concurrency, worker.processes])).toEqual([
      [["a", "b*"], 9, 3],
      [["a", "b*"], 9, 3],
    ]);
    expect(fromFlags.start.processAliveThreshold).toBe(600_000);
    expect(fromFlags.jobs).toEqual([resolve(ROOT, "x.ts")]);
  });

  it("--prefetch and FIRM_QUEUE_PREFETCH set every worker's prefetch, 0 included", async () => {
    const prefetches = async (flags: { prefetch?: string }, env: Record<string, string>) =>
      (await resolveCliConfig({ config: FULL, ...flags }, env, ROOT)).start.workers.map((worker) => worker.prefetch);
    expect(await prefetches({}, { FIRM_QUEUE_PREFETCH: "0" })).toEqual([0, 0]);
    expect(await prefetches({ prefetch: "8" }, { FIRM_QUEUE_PREFETCH: "0" })).toEqual([8, 8]);
    await expect(prefetches({ prefetch: "-1" }, {})).rejects.toThrow("--prefetch must be a whole number of at least 0");
    await expect(prefetches({}, { FIRM_QUEUE_PREFETCH: "many" })).rejects.toThrow(
      "FIRM_QUEUE_PREFETCH must be a whole number of at least 0",
    );
  });

  it("--exec-argv and FIRM_QUEUE_EXEC_ARGV set every worker's node flags; an empty flag sets none", async () => {
    const flagsOf = async (flags: { execArgv?: string }, env: Record<string, string>) =>
      (await resolveCliConfig({ config: FULL, ...flags }, env, ROOT)).start.workers.map((worker) => worker.execArgv);
    expect(await flagsOf({}, {})).toEqual([[], []]);
    const lean = "--max-semi-space-size=4  --single-threaded-gc";
    expect(await flagsOf({}, { FIRM_QUEUE_EXEC_ARGV: lean })).toEqual([
      ["--max-semi-space-size=4", "--single-threaded-gc"],
      ["--max-semi-space-size=4", "--single-threaded-gc"],
    ]);
    expect(await flagsOf({ execArgv: "--max-old-space-size=200" }, { FIRM_QUEUE_EXEC_ARGV: lean })).toEqual([
      ["--max-old-space-size=200"],
      ["--max-old-space-size=200"],
    ]);
    expect(await flagsOf({ execArgv: "" }, { FIRM_QUEUE_EXEC_ARGV: lean })).toEqual([[], []]);
    const dir = mkdtempSync(join(tmpdir(), "firm-queue-execargv-"));
    writeFileSync(join(dir, "firm-queue.config.mjs"), 'export default { workers: [{ execArgv: "--jitless" }] };\n');
    await expect(resolveCliConfig({}, {}, dir)).rejects.toThrow(
      'firm-queue.config.mjs: workers[0].execArgv must be a list of node flags (non-empty strings), got "--jitless"',
    );
  });

  it("logFormat must be text or json", async () => {
    const dir = mkdtempSync(join(tmpdir(), "firm-queue-logformat-"));
    const file = join(dir, "firm-queue.config.mjs");
    writeFileSync(file, 'export default { logFormat: "yaml" };\n');
    await expect(resolveCliConfig({ config: file }, {}, dir)).rejects.toThrow(/logFormat must be text or json/);
  });

  it("without a config: fork mode, one worker on * and one dispatcher", async () => {
    const empty = mkdtempSync(join(tmpdir(), "firm-queue-noconfig-"));
    const config = await resolveCliConfig({}, {}, empty);
    expect(config.file).toBeUndefined();
    expect(config.start).toMatchObject({
      mode: "fork",
      workers: [{ queues: "*", concurrency: 3, processes: 1 }],
      dispatchers: [{ pollingInterval: 1000, batchSize: 500 }],
      shutdownTimeout: 5000,
      processHeartbeatInterval: 60_000,
      processAliveThreshold: 300_000,
    });
  });

  it("finds firm-queue.config.ts in the current directory, or the file FIRM_QUEUE_CONFIG names", async () => {
    const dir = mkdtempSync(join(tmpdir(), "firm-queue-config-"));
    writeFileSync(
      join(dir, "firm-queue.config.ts"),
      'const mode: "async" = "async";\nexport default { mode, jobs: ["./jobs.ts"] };\n',
    );
    writeFileSync(join(dir, "other.config.js"), 'export default { shutdownTimeout: "9s" };\n');
    const found = await resolveCliConfig({}, {}, dir);
    expect(found.file).toBe(join(dir, "firm-queue.config.ts"));
    expect(found.start.mode).toBe("async");
    expect(found.jobs).toEqual([join(dir, "jobs.ts")]);
    const named = await resolveCliConfig({}, { FIRM_QUEUE_CONFIG: "other.config.js" }, dir);
    expect(named.start.shutdownTimeout).toBe(9000);
  });

  it("rejects unknown keys and impossible values, naming the key, the variable or the flag", async () => {
    await expect(resolveCliConfig({ config: "test/fixtures/config/invalid-key.config.ts" }, {}, ROOT)).rejects.toThrow(
      'invalid-key.config.ts: Unknown workers[0] option "concurency"',
    );
    await expect(resolveCliConfig({ config: "test/fixtures/config/impossible.config.ts" }, {}, ROOT)).rejects.toThrow(
      "processAliveThreshold (300000 ms) must be longer than processHeartbeatInterval (600000 ms)",
    );
    await expect(resolveCliConfig({ config: FULL }, { FIRM_QUEUE_PROCESSES: "two" }, ROOT)).rejects.toThrow(
      "FIRM_QUEUE_PROCESSES must be a whole number",
    );
    await expect(resolveCliConfig({ config: FULL, pollingInterval: "fast" }, {}, ROOT)).rejects.toThrow(
      "--polling-interval must be milliseconds",
    );
    await expect(resolveCliConfig({ config: FULL, mode: "threads" }, {}, ROOT)).rejects.toThrow(
      '--mode must be "fork" or "async"',
    );
    await expect(resolveCliConfig({ config: FULL, databaseUrl: "redis://x" }, {}, ROOT)).rejects.toThrow(
      'unsupported scheme "redis:"',
    );
    await expect(resolveCliConfig({ config: "nope.config.ts" }, {}, ROOT)).rejects.toThrow(
      "Config file not found: nope.config.ts",
    );
    const dir = mkdtempSync(join(tmpdir(), "firm-queue-config-"));
    writeFileSync(join(dir, "firm-queue.config.mjs"), "export default { schedulers: {} };\n");
    await expect(resolveCliConfig({}, {}, dir)).rejects.toThrow('Unknown firm-queue.config.mjs key "schedulers"');
    // A second directory: an imported module is cached by path.
    const second = mkdtempSync(join(tmpdir(), "firm-queue-config-"));
    writeFileSync(join(second, "firm-queue.config.mjs"), "export default { workers: [{ concurrency: 0 }] };\n");
    await expect(resolveCliConfig({}, {}, second)).rejects.toThrow(
      "workers[0].concurrency must be a whole number of at least 1, got 0",
    );
  });
});

describe("firm-queue check", () => {
  it("prints a summary and exits 0 for a valid configuration", async () => {
    const result = await runCli(["check", "--config", "test/fixtures/processes.config.ts"], {
      FIRM_QUEUE_DATABASE_URL: "sqlite:unused.sqlite3",
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("mode:         fork");
    expect(result.stdout).toContain("jobs:         node-flags, record, sleep");
    expect(result.stdout).toContain(
      "worker 1:     queues=* concurrency=3 processes=1 pollingInterval=50ms prefetch=60",
    );
    expect(result.stdout).toContain("Configuration OK.");
  });

  it("exits 1 naming the offending key", async () => {
    const result = await runCli(["check", "--config", "test/fixtures/config/invalid-key.config.ts"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Unknown workers[0] option "concurency"');
    const noJobs = await runCli([
      "check",
      "--config",
      "test/fixtures/config/impossible.config.ts",
      "--require",
      "test/fixtures/missing.ts",
    ]);
    expect(noJobs.code).toBe(1);
    expect(noJobs.stderr).toContain("processAliveThreshold");
  });
});

describeEachDatabase("firm-queue start with a config", (env) => {
  it("with no config file, runs one worker on * and one dispatcher, each in its own process", async () => {
    const db = await env.db();
    const bare = spawnCli(["start", "--require", "test/fixtures/process-jobs.ts"], {
      FIRM_QUEUE_DATABASE_URL: env.url,
    });
    try {
      const rows = await waitForProcesses(db, bare);
      const supervisor = rows.find((row) => row.kind === "Supervisor")!;
      expect(
        rows
          .filter((row) => row.kind !== "Supervisor")
          .every((row) => row.supervisorId === supervisor.id && row.pid !== supervisor.pid),
      ).toBe(true);
      const worker = await db
        .selectFrom("firm_queue_processes")
        .select("metadata")
        .where("kind", "=", "Worker")
        .executeTakeFirstOrThrow();
      expect(JSON.parse(worker.metadata!)).toMatchObject({ queues: "*", concurrency: 3 });
    } finally {
      bare.child.kill("SIGINT");
    }
    expect((await bare.finished).code).toBe(0);
    expect(await processRows(db)).toEqual([]);
  });

  it("a config's worker processes each get a child process", async () => {
    const db = await env.db();
    const run = startSupervisor(env, ["--processes", "2"]);
    try {
      const rows = await waitForProcesses(db, run, { workers: 2 });
      expect(new Set(rows.map((row) => row.pid)).size).toBe(4);
    } finally {
      run.child.kill("SIGTERM");
    }
    expect((await run.finished).code).toBe(0);
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
  });
});
