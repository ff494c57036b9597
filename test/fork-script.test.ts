import { expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor, enqueued } from "./support/harness.js";
import { spawnNode } from "./support/processes.js";
import { processRows, waitForProcesses, waitWhile } from "./support/supervised.js";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

describeEachDatabase("fork mode from a user's own script", (env) => {
  it("children import the module that defined the jobs, run them, and stop with the script", async () => {
    const firm = env.firm();
    const db = await env.db();
    const log = join(mkdtempSync(join(tmpdir(), "firm-queue-script-")), "jobs.log");
    const script = spawnNode(["test/fixtures/fork-script.mjs"], { FIRM_QUEUE_DATABASE_URL: env.url, FIXTURE_LOG: log });
    try {
      const rows = await waitForProcesses(db, script, { workers: 2 });
      const supervisor = rows.find((row) => row.kind === "Supervisor")!;
      expect(supervisor.pid).toBe(script.child.pid);
      const workerPids = rows.filter((row) => row.kind === "Worker").map((row) => row.pid);
      const ids = await Promise.all(
        Array.from({ length: 6 }, () => enqueued(firm.enqueue("record", null, { undeclared: true }))),
      );
      await waitWhile(
        script,
        async () => (await Promise.all(ids.map((id) => firm.getJob(id)))).every((job) => job?.state === "finished"),
        "jobs run",
      );
      const ranIn = new Set(
        readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((line) => Number(line.split(" ")[2])),
      );
      for (const pid of ranIn) expect(workerPids).toContain(pid);
    } finally {
      script.child.kill("SIGTERM");
    }
    const result = await script.finished;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("supervisor stopped");
    expect(await countRows(db, "firm_queue_processes")).toBe(0);
  });

  it("refuses, before registering anything, when the jobs are defined in the script being run", async () => {
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const script = spawnNode(["test/fixtures/fork-script-inline.mjs"], { FIRM_QUEUE_DATABASE_URL: env.url });
      void script.finished.then(resolve);
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("ConfigurationError: fork mode would import");
    expect(result.stdout).toContain("fork-script-inline.mjs");
    expect(result.stdout).toContain("require");
    expect(await processRows(await env.db())).toEqual([]);
  });

  it("runs from TypeScript sources too (children load them through jiti), with an explicit require", async () => {
    const firm = env.firm();
    const log = join(mkdtempSync(join(tmpdir(), "firm-queue-src-")), "jobs.log");
    process.env.FIXTURE_LOG = log;
    try {
      const supervisor = await firm.start({
        mode: "fork",
        require: ["test/fixtures/process-jobs.ts"],
        workers: [{ pollingInterval: 50 }],
        dispatchers: [],
        processHeartbeatInterval: 300,
        processAliveThreshold: 3000,
      });
      expect(supervisor.mode).toBe("fork");
      const id = await enqueued(firm.enqueue("record", null, { undeclared: true }));
      await waitFor(async () => (await firm.getJob(id))?.state === "finished", 30_000, "the job run by a child");
      const pid = Number(readFileSync(log, "utf8").trim().split(" ")[2]);
      expect(pid).not.toBe(process.pid);
      await supervisor.stop();
    } finally {
      delete process.env.FIXTURE_LOG;
    }
    expect(await countRows(await env.db(), "firm_queue_processes")).toBe(0);
    expect(existsSync(log)).toBe(true);
  });

  it("a child that cannot start fails start() with ChildProcessError and leaves nothing registered", async () => {
    const firm = env.firm();
    const broken = firm.start({
      mode: "fork",
      require: ["test/fixtures/config/invalid-key.config.ts"],
      dispatchers: [],
    });
    await expect(broken).rejects.toThrow(
      /The worker child process could not start: None of .* exports a FirmQueue instance/,
    );
    expect(await processRows(await env.db())).toEqual([]);
  });
});
