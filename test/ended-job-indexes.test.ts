import { CompiledQuery, createQueryId, type KyselyPlugin, type RootOperationNode, sql } from "kysely";
import { expect, it } from "vitest";
import type { Db, DialectName } from "../src/database/dialect.js";
import { MIGRATIONS } from "../src/database/migrations/index.js";
import { FirmQueue, silentLogger } from "../src/index.js";
import { countJobsUpTo } from "../src/models/job-count.js";
import { listJobsPage } from "../src/models/job-listing.js";
import { deleteFinishedJobsBatch } from "../src/models/finished-jobs.js";
import { queueThroughput } from "../src/models/queue-throughput.js";
import { throughputBuckets } from "../src/models/throughput.js";
import { describeEachDatabase } from "./support/harness.js";
import { migrateBefore } from "./support/partial-migration.js";
import { createTestDatabase } from "./support/test-database.js";

const ON_FINISHED_AT = "index_firm_queue_jobs_on_finished_at";
const FOR_FILTERING = "index_firm_queue_jobs_for_filtering";
const FOR_ALERTING = "index_firm_queue_jobs_for_alerting";

/** An index's definition: its SQL on SQLite and PostgreSQL, its columns on MariaDB; "" when absent. */
async function indexDefinition(db: Db, dialect: DialectName, index: string): Promise<string> {
  const query =
    dialect === "sqlite"
      ? sql<{ text: string }>`SELECT sql AS text FROM sqlite_master WHERE type = 'index' AND name = ${index}`
      : dialect === "postgres"
        ? sql<{ text: string }>`SELECT indexdef AS text FROM pg_indexes WHERE indexname = ${index}`
        : sql<{ text: string }>`SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) AS text
            FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = ${index}`;
  return ((await query.execute(db)).rows[0]?.text ?? "").replace(/\s+/g, " ");
}

/** The jobs table's indexes with finished_at as migration 018 leaves them on `dialect`. */
async function expectEndedJobIndexes(db: Db, dialect: DialectName): Promise<void> {
  expect(await indexDefinition(db, dialect, FOR_ALERTING)).toBe("");
  const onFinishedAt = await indexDefinition(db, dialect, ON_FINISHED_AT);
  const forFiltering = await indexDefinition(db, dialect, FOR_FILTERING);
  if (dialect === "mysql") {
    expect(onFinishedAt).toBe("finished_at");
    expect(forFiltering).toBe("queue_name,finished_at");
  } else {
    expect(onFinishedAt).toMatch(/\(\s*"?finished_at"?\s*\) WHERE \(?finished_at IS NOT NULL\)?$/);
    // Over every job: it also finds a queue's jobs in any state (the failed jobs of a queue).
    expect(forFiltering).toMatch(/\(\s*"?queue_name"?, "?finished_at"?\s*\)$/);
  }
}

/** Every job's row, by id, for comparing before and after a migration. */
async function jobRows(db: Db) {
  return db
    .selectFrom("firm_queue_jobs")
    .select(["id", "queue_name", "class_name", "finished_at", "cancelled_at", "attempts"])
    .orderBy("id")
    .execute();
}

describeEachDatabase("the jobs' indexes with finished_at (migration 018)", (env) => {
  it("(finished_at) covers ended jobs only (MariaDB: every job), (queue_name, finished_at) every job, (scheduled_at, finished_at) is gone", async () => {
    await expectEndedJobIndexes(await env.db(), env.dialect);
  });

  it("migrating a jobs table with rows keeps every row, and the finished listing still reads them", async () => {
    const fresh = await createTestDatabase(env.dialect);
    const firm = new FirmQueue({ databaseUrl: fresh.url, logger: silentLogger });
    try {
      const database = await firm.database();
      const { db } = database;
      // The schema as the migrations before 018 left it.
      const before = await migrateBefore(database, env.dialect, "018_ended_job_indexes");
      expect(await indexDefinition(db, env.dialect, FOR_ALERTING)).not.toBe("");
      const job = firm.defineJob("plain", async () => {}, { queue: "q" });
      const ids: number[] = [];
      for (let i = 0; i < 6; i++) {
        const result = await job.enqueue(null, { queue: i % 2 === 0 ? "even" : "odd" });
        if (result.status === "created") ids.push(result.id);
      }
      // Four of them ended (two finished, one of each queue, and two cancelled), two still wait.
      const ended = (at: number) => new Date(Date.UTC(2026, 11, 1, 12, at));
      for (const [index, id] of ids.slice(0, 4).entries())
        await db
          .updateTable("firm_queue_jobs")
          .set({ finished_at: ended(index), cancelled_at: index >= 2 ? ended(index) : null })
          .where("id", "=", id)
          .execute();
      await db.deleteFrom("firm_queue_ready_executions").where("job_id", "in", ids.slice(0, 4)).execute();
      const rows = await jobRows(db);

      expect(await firm.migrate()).toEqual(MIGRATIONS.slice(before).map((migration) => migration.version));
      expect(await jobRows(db)).toEqual(rows);
      await expectEndedJobIndexes(db, env.dialect);
      const listed = await firm.inspect.jobs({ state: "finished" });
      expect(listed.jobs.map((summary) => summary.id)).toEqual([ids[1], ids[0]]);
      const odd = await firm.inspect.jobs({ state: "cancelled", queue: "odd" });
      expect(odd.jobs.map((summary) => summary.id)).toEqual([ids[3]]);
      expect((await firm.inspect.jobs({ state: "ready" })).jobs.map((summary) => summary.id)).toEqual(
        ids.slice(4).reverse(),
      );
      expect(await firm.migrate()).toEqual([]);
    } finally {
      await firm.close();
      await fresh.drop();
    }
  });
});

/** Records the statements a model function sends, without changing them. */
class StatementRecorder implements KyselyPlugin {
  readonly nodes: RootOperationNode[] = [];
  transformQuery({ node }: { node: RootOperationNode }): RootOperationNode {
    this.nodes.push(node);
    return node;
  }
  async transformResult<T>({ result }: { result: T }): Promise<T> {
    return result;
  }
}

/** The plan text of the first SELECT reading `finished_at` that `work` sends through `db`. */
async function planOf(db: Db, dialect: DialectName, work: (db: Db) => Promise<unknown>): Promise<string> {
  const recorder = new StatementRecorder();
  await work(db.withPlugin(recorder));
  const compiled = recorder.nodes
    .map((node) => db.getExecutor().compileQuery(node, createQueryId()))
    .find((query) => /^\s*select\b/i.test(query.sql) && query.sql.includes("finished_at"));
  if (!compiled) throw new Error("no SELECT of finished_at was sent");
  const prefix = dialect === "sqlite" ? "EXPLAIN QUERY PLAN " : "EXPLAIN ";
  const result = await db.executeQuery<Record<string, unknown>>(
    CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]),
  );
  return result.rows.map((row) => String(dialect === "sqlite" ? row.detail : row["QUERY PLAN"])).join("\n");
}

describeEachDatabase(
  "the queries of ended jobs can read the partial (finished_at) index",
  (env) => {
    it("finished and cancelled listings and their deep pages, their bounded counts, the throughput and the cleanup", async () => {
      const firm = env.firm();
      const database = await firm.database();
      const { db, dialect } = database;
      // A few rows of each kind; on PostgreSQL the plans are asked for with sequential scans,
      // bitmap scans and sorts priced out, so they show which ordered index reads a query can
      // use, whatever the table's size.
      const job = firm.defineJob("plain", async () => {}, { queue: "q" });
      for (let i = 0; i < 4; i++) await job.enqueue(null);
      await db.updateTable("firm_queue_jobs").set({ finished_at: new Date() }).where("id", "<=", 2).execute();
      const plan = (work: (db: Db) => Promise<unknown>) =>
        database.claimTransaction(async (trx) => {
          if (env.dialect === "postgres")
            for (const setting of ["enable_seqscan", "enable_bitmapscan", "enable_sort"])
              await sql.raw(`SET LOCAL ${setting} = off`).execute(trx);
          return planOf(trx, env.dialect, work);
        });
      const eitherIndex = new RegExp(`${ON_FINISHED_AT}|${FOR_FILTERING}`);
      const cutoff = new Date(Date.now() + 60_000);
      const hour = { start: new Date(Date.now() - 3_600_000), end: new Date(Date.now() + 60_000) };

      expect(await plan((trx) => listJobsPage(trx, { state: "finished" }, 50, null))).toContain(ON_FINISHED_AT);
      expect(await plan((trx) => listJobsPage(trx, { state: "cancelled" }, 50, null))).toContain(ON_FINISHED_AT);
      // A deep page reads one range of the index, from its cursor on, in order (no sort).
      const deep = await plan((trx) => listJobsPage(trx, { state: "finished" }, 50, { id: 2, at: new Date() }));
      expect(deep).toContain(ON_FINISHED_AT);
      if (env.dialect === "sqlite") expect(deep).not.toMatch(/TEMP B-TREE|MULTI-INDEX/);
      expect(await plan((trx) => listJobsPage(trx, { state: "finished", queue: "q" }, 50, null))).toMatch(eitherIndex);
      expect(await plan((trx) => countJobsUpTo(trx, { state: "finished", queue: "q" }, 1000))).toMatch(eitherIndex);
      expect(await plan((trx) => countJobsUpTo(trx, { state: "cancelled" }, 1000))).toMatch(eitherIndex);
      expect(await plan((trx) => queueThroughput(trx, hour, 10))).toMatch(eitherIndex);
      expect(await plan((trx) => throughputBuckets(trx, new Date(), 6, 600_000))).toContain(ON_FINISHED_AT);
      expect(await plan((trx) => deleteFinishedJobsBatch(trx, dialect, { cutoff }, 10))).toContain(ON_FINISHED_AT);
    });
  },
  ["sqlite", "postgres"],
);
