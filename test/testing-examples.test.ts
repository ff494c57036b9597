import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { spawnNode } from "./support/processes.js";

// The examples of docs/testing-apps.md, run as a user runs them: vitest and node:test, on
// in-memory SQLite (the examples' default) and on the application's own PostgreSQL or MariaDB.
describeEachDatabase("firm-queue/testing examples", (env) => {
  const databaseUrl = () => (env.dialect === "sqlite" ? undefined : env.url);

  it("the vitest example passes", { timeout: 120_000 }, async () => {
    const run = await spawnNode(
      ["node_modules/vitest/vitest.mjs", "run", "--config", "examples/testing/vitest.config.mjs"],
      {
        DATABASE_URL: databaseUrl(),
        NO_COLOR: "1",
        FORCE_COLOR: "0",
      },
    ).finished;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Tests\s+4 passed/);
  });

  it("the node:test example passes", { timeout: 120_000 }, async () => {
    const run = await spawnNode(["--test", "examples/testing/signup.node-test.mjs"], {
      DATABASE_URL: databaseUrl(),
    }).finished;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/# pass 3/);
    expect(run.stdout).toMatch(/# fail 0/);
  });
});
