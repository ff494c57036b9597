import BetterSqlite3 from "better-sqlite3";
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from "kysely";
import mysql from "mysql2";
import pg from "pg";
import { expect, it } from "vitest";
import { ConfigurationError, FirmQueue, silentLogger } from "../src/index.js";
import { mysqlUri, sqliteFile } from "./support/app-handles.js";
import { countRows, describeEachDatabase, type TestEnv } from "./support/harness.js";

/** A FirmQueue on a Kysely handle that counts the statements it runs. */
function countingFirm(env: TestEnv): { firm: FirmQueue; statements: () => number; close: () => Promise<void> } {
  let count = 0;
  const url = env.url;
  const db = new Kysely<unknown>({
    dialect:
      env.dialect === "postgres"
        ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) })
        : env.dialect === "mysql"
          ? new MysqlDialect({ pool: mysql.createPool(mysqlUri(url)) })
          : new SqliteDialect({ database: new BetterSqlite3(sqliteFile(url)) }),
    log: () => void count++,
  });
  const firm = new FirmQueue({ database: db, logger: silentLogger });
  return {
    firm,
    statements: () => count,
    close: async () => {
      await firm.close();
      await db.destroy();
    },
  };
}

describeEachDatabase("enqueueAll with options per job", (env) => {
  it("gives each job its own queue, priority, wait or at over the shared options", async () => {
    const firm = env.firm();
    const job = firm.defineJob("each", async (_args: { n: number }) => {}, { queue: "base", priority: 1 });
    const at = new Date(Date.now() + 3_600_000);
    const ids = (
      await job.enqueueAll([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }], {
        priority: 5,
        each: [undefined, { queue: "urgent", priority: -1 }, { wait: "10m" }, { at }],
      })
    ).map((result) => result.id);
    const infos = await Promise.all(ids.map((id) => firm.getJob(id)));
    expect(infos.map((info) => [info?.queue, info?.priority, info?.state])).toEqual([
      ["base", 5, "ready"],
      ["urgent", -1, "ready"],
      ["base", 5, "scheduled"],
      ["base", 5, "scheduled"],
    ]);
    expect(infos[3]?.scheduledAt).toEqual(at);
    expect(infos[2]!.scheduledAt!.getTime()).toBeGreaterThan(Date.now() + 500_000);
  });

  it("takes a function of each job's arguments and place; a job's own time replaces the shared one", async () => {
    const firm = env.firm();
    const job = firm.defineJob("each-fn", async (_args: { tier: string }) => {});
    const ids = (
      await job.enqueueAll([{ tier: "gold" }, { tier: "free" }], {
        wait: "1h",
        each: (args, index) => (args.tier === "gold" ? { at: new Date(0), priority: index } : undefined),
      })
    ).map((result) => result.id);
    expect((await firm.getJob(ids[0]!))?.state).toBe("ready");
    expect((await firm.getJob(ids[1]!))?.state).toBe("scheduled");
  });

  it("gives each job its own unique key: a later job with an earlier one's key is its duplicate", async () => {
    const firm = env.firm();
    const job = firm.defineJob("each-key", async (_args: { n: number }) => {});
    const results = await job.enqueueAll([{ n: 0 }, { n: 1 }, { n: 2 }], {
      each: [{ key: "a" }, { key: "a" }, { key: "b" }],
    });
    expect(results.map((result) => result.status)).toEqual(["created", "duplicate", "created"]);
    expect(results[1]!.id).toBe(results[0]!.id);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(2);
  });

  it("refuses bad per-job options before writing anything", async () => {
    const firm = env.firm();
    const job = firm.defineJob("each-bad", async () => {});
    await expect(job.enqueueAll([null, null], { each: [{}] })).rejects.toThrow(/has 1 entries for 2 jobs/);
    await expect(job.enqueueAll([null, null], { each: [{}, { queue: "a b" }] })).rejects.toThrow(ConfigurationError);
    await expect(job.enqueueAll([null], { each: [{ transaction: {} } as never] })).rejects.toThrow(
      /Unknown enqueueAll\("each-bad"\) each\[0\] option "transaction"/,
    );
    await expect(job.enqueueAll([null], { each: "x" as never })).rejects.toThrow(ConfigurationError);
    await expect(job.enqueueAll([null], { each: [{ wait: 5, at: new Date() }] })).rejects.toThrow(
      "cannot be used together",
    );
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
  });

  it("writes with as many statements for 500 jobs with options of their own as for 5", async () => {
    const counting = countingFirm(env);
    try {
      const job = counting.firm.defineJob("each-count", async (_args: { n: number }) => {});
      const each = (_args: { n: number }, index: number) =>
        index % 2 === 0 ? { queue: `q${index % 3}`, priority: index } : { wait: "1h" as const, priority: -index };
      const run = async (n: number) => {
        const before = counting.statements();
        const ids = await job.enqueueAll(
          Array.from({ length: n }, (_, i) => ({ n: i })),
          { each },
        );
        expect(ids).toHaveLength(n);
        return counting.statements() - before;
      };
      await run(2); // the first call opens the database and checks the schema
      const few = await run(5);
      const many = await run(500);
      expect(many).toBe(few);
      expect(await countRows(await env.db(), "firm_queue_scheduled_executions")).toBe(1 + 2 + 250);
      expect(await countRows(await env.db(), "firm_queue_ready_executions")).toBe(1 + 3 + 250);
    } finally {
      await counting.close();
    }
  });
});
