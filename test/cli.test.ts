import { expect, it, describe } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { runCli } from "./support/processes.js";

describe("CLI help", () => {
  it("explains each command", async () => {
    const top = await runCli(["--help"]);
    expect(top.code).toBe(0);
    for (const command of ["migrate", "start", "drain"]) expect(top.stdout).toContain(command);
    for (const command of ["migrate", "start", "drain"]) {
      const help = await runCli([command, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("--database-url");
      expect(help.stdout).toContain("--require");
    }
    expect((await runCli(["start", "--help"])).stdout).toContain("--concurrency");
    expect((await runCli(["drain", "--help"])).stdout).toContain("--queues");
  });

  it("fails clearly on bad input", async () => {
    const noJobs = await runCli(["drain", "--database-url", "sqlite::memory:"]);
    expect(noJobs.code).toBe(1);
    expect(noJobs.stderr).toContain("pass --require <module>");
    const missing = await runCli(["drain", "--require", "does/not/exist.ts"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Job module not found: does/not/exist.ts");
    const badUrl = await runCli(["migrate", "--database-url", "redis://x"]);
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toContain('unsupported scheme "redis:"');
    const badNumber = await runCli(["drain", "--concurrency", "zero", "--require", "x.ts"]);
    expect(badNumber.code).not.toBe(0);
    expect(badNumber.stderr).toContain("must be a whole number");
  });
});

describeEachDatabase("CLI", (env) => {
  it("drain runs the jobs of a TypeScript module, honouring --queues", async () => {
    const firm = env.firm();
    const ids = (
      await Promise.all([
        firm.enqueue("record", null, { undeclared: true, queue: "a" }),
        firm.enqueue("record", null, { undeclared: true, queue: "b" }),
      ])
    ).map((result) => result.id);
    const result = await runCli(["drain", "--require", "test/fixtures/greeter.ts", "--queues", "a"], {
      FIRM_QUEUE_DATABASE_URL: env.url,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Ran 1 job(s).");
    expect((await firm.getJob(ids[0]!))?.state).toBe("finished");
    expect((await firm.getJob(ids[1]!))?.state).toBe("ready");
  });

  it("loads plain .mjs modules and several --require modules", async () => {
    const firm = env.firm();
    const plain = (await firm.enqueue("plain", null, { undeclared: true })).id!;
    const record = (await firm.enqueue("record", null, { undeclared: true })).id!;
    const both = await runCli(["drain", "-r", "test/fixtures/plain-module.mjs", "-r", "test/fixtures/greeter.ts"], {
      FIRM_QUEUE_DATABASE_URL: env.url,
    });
    // Two modules, two FirmQueue instances: ambiguous, so refused.
    expect(both.code).toBe(1);
    expect(both.stderr).toContain("2 different FirmQueue instances");
    const result = await runCli(["drain", "-r", "test/fixtures/plain-module.mjs"], {
      FIRM_QUEUE_DATABASE_URL: env.url,
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await firm.getJob(plain))?.state).toBe("finished");
    expect((await firm.getJob(record))?.error?.name).toBe("UnknownJobError");
  });

  it("start runs jobs until SIGTERM, then exits 0 leaving no process rows", async () => {
    const firm = env.firm();
    const id = (await firm.enqueue("record", null, { undeclared: true })).id!;
    const { spawnCli } = await import("./support/processes.js");
    const started = spawnCli([
      "start",
      "--require",
      "test/fixtures/greeter.ts",
      "--database-url",
      env.url,
      "--polling-interval",
      "50ms",
    ]);
    const deadline = Date.now() + 15_000;
    while ((await firm.getJob(id))?.state !== "finished") {
      if (Date.now() > deadline) throw new Error(`job never finished; output:\n${started.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    started.child.kill("SIGTERM");
    const result = await started.finished;
    expect(result.code, result.stderr).toBe(0);
    const { db } = await firm.database();
    expect(await db.selectFrom("firm_queue_processes").select("id").execute()).toEqual([]);
  });
});
