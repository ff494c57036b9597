import { describe, expect, it } from "vitest";
import { resolveStartOptions } from "../src/facade/options.js";
import { connectionBudget, workerPoolSize } from "../src/supervisor/connection-budget.js";
import { planRoles } from "../src/supervisor/role-table.js";
import { describeEachDatabase } from "./support/harness.js";
import { ROOT, runCli } from "./support/processes.js";

const FIXTURE = `${ROOT}/test/fixtures/multi-host-jobs.ts`;

describe("connection budget", () => {
  const budgetOf = (options: Parameters<typeof resolveStartOptions>[0], poolSize: number | null, listens: boolean) => {
    const start = resolveStartOptions(options);
    return connectionBudget(start, planRoles(start), poolSize, listens);
  };

  it("derives each fork-mode process's pool from its role: 2 + 3 + ceil(concurrency / 4) per worker, a listener where the database notifies", () => {
    expect([1, 3, 4, 5, 24].map(workerPoolSize)).toEqual([4, 4, 4, 5, 9]);
    const budget = budgetOf(
      { mode: "fork", workers: [{ concurrency: 24, processes: 2 }, { concurrency: 3 }], scheduler: {} },
      null,
      true,
    );
    expect(budget.processes.map((process) => [process.label, process.pool, process.listener])).toEqual([
      ["supervisor", 2, 0],
      ["worker 1", 9, 1],
      ["worker 2", 9, 1],
      ["worker 3", 4, 1],
      ["dispatcher 1", 3, 0],
      ["scheduler 1", 2, 0],
    ]);
    expect(budget.total).toBe(2 + 10 + 10 + 5 + 3 + 2);
    expect(
      budgetOf(
        { mode: "fork", workers: [{ concurrency: 24, processes: 2 }, { concurrency: 3 }], scheduler: {} },
        null,
        false,
      ).total,
    ).toBe(2 + 9 + 9 + 4 + 3 + 2);
  });

  it("gives async mode one pool for every role, and lets poolSize fix every pool", () => {
    expect(budgetOf({ mode: "async", workers: [{ concurrency: 8 }] }, null, true).processes).toEqual([
      { label: "all roles (async mode)", pool: 2 + 5 + 3, listener: 1 },
    ]);
    expect(budgetOf({ mode: "fork", workers: [{ processes: 3 }] }, 6, false).total).toBe(6 * 5);
  });
});

describeEachDatabase("pool sizes", (env) => {
  it("sizes a started process's pool from its roles, unless poolSize is given", async () => {
    const derived = env.firm();
    expect((await derived.database()).poolSize).toBe(10);
    await (await derived.start({ workers: [{ concurrency: 12 }] })).stop();
    expect((await derived.database()).poolSize).toBe(2 + 3 + 3 + 3);
    const fixed = env.firm({ poolSize: 4 });
    await (await fixed.start({ workers: [{ concurrency: 12 }] })).stop();
    expect((await fixed.database()).poolSize).toBe(4);
  });
});

describeEachDatabase("firm-queue check: connections", (env) => {
  it("prints the connections per host and in all, and warns past the server's max_connections", async () => {
    const args = ["check", "--require", FIXTURE, "--database-url", env.url, "--concurrency", "24", "--processes", "2"];
    const one = await runCli(args);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(
      /connections: +at most \d+ per host \(supervisor 2, worker 1 9(\+1 listen)?, worker 2 9(\+1 listen)?, dispatcher 1 3; pool sizes derived from the roles\)/,
    );
    expect(one.stdout).not.toContain("WARNING");
    const perHost = Number(/at most (\d+) per host/.exec(one.stdout)![1]);
    const server = /server: +(\d+) connections allowed/.exec(one.stdout);
    const many = await runCli([...args, "--hosts", "1000"]);
    expect(many.code, many.stderr).toBe(0);
    expect(many.stdout).toContain(`${perHost * 1000} for 1000 hosts`);
    if (server) {
      // A database with a server (PostgreSQL, MariaDB) says how many connections it allows.
      expect(perHost * 1000).toBeGreaterThan(Number(server[1]));
      expect(many.stdout).toMatch(
        new RegExp(
          `WARNING: +1000 host\\(s\\) of this configuration may open ${perHost * 1000} connections, more than the server's ${server[1]}`,
        ),
      );
    } else {
      expect(many.stdout).not.toContain("WARNING");
    }
  });
});
