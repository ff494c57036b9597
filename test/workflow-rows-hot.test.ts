import { sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../src/database/dialect.js";
import { MIGRATIONS } from "../src/database/migrations/index.js";
import { FirmQueue, silentLogger } from "../src/index.js";
import { TestEnv, waitFor } from "./support/harness.js";
import { migrateBefore } from "./support/partial-migration.js";
import { createTestDatabase, testDialects } from "./support/test-database.js";

/*
 * PostgreSQL: a job's end sets the state of its dependency edges and its batch membership, one
 * update per row. The tables leave half of each page free (migration 017), so those updates are
 * HOT (no new index entries). Without that room, rows written by one bulk insert sit on full pages
 * and nearly every such update is a non-HOT one.
 */
describe.runIf(testDialects().includes("postgres"))("edges and batch memberships on PostgreSQL", () => {
  const env = new TestEnv("postgres");
  beforeAll(() => env.setup());
  afterEach(() => env.reset());
  afterAll(() => env.teardown());

  async function updates(table: string): Promise<{ all: number; hot: number }> {
    const client = new pg.Client({ connectionString: env.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        "SELECT n_tup_upd AS all, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = $1",
        [table],
      );
      return { all: Number(rows[0].all), hot: Number(rows[0].hot) };
    } finally {
      await client.end();
    }
  }

  it("the end of each child of a flow and each job of a batch updates its row without new index entries", async () => {
    const firm = env.firm();
    const children = 300;
    firm.defineJob("child", async () => {});
    firm.defineJob("parent", async () => {});
    firm.defineJob("callback", async () => {});
    const each = Array.from({ length: children }, (_, n) => ({ name: "child", args: { n } }));
    await firm.flow({ name: "parent", args: null, children: each });
    await firm.batch(each, { onFinish: { name: "callback", args: null } });
    const before = {
      edges: await updates("firm_queue_job_dependencies"),
      members: await updates("firm_queue_batch_jobs"),
    };
    expect(await firm.drain()).toBe(2 * children + 2);
    // A backend reports its counts when it exits (or after a while idle): closed, then read.
    await firm.close();
    for (const [table, start] of [
      ["firm_queue_job_dependencies", before.edges],
      ["firm_queue_batch_jobs", before.members],
    ] as const) {
      let after = start;
      await waitFor(
        async () => {
          after = await updates(table);
          return after.all - start.all >= children;
        },
        10_000,
        `${table}'s update counts`,
      );
      expect(after.hot - start.hot).toBeGreaterThanOrEqual((after.all - start.all) * 0.95);
    }
  });
});

/*
 * MariaDB: the same updates set a state that is NULL while the edge or membership is open. The
 * column is fixed-width in a REDUNDANT-format table (migration 019), where a NULL keeps the
 * column's room, so InnoDB writes the state in place instead of deleting and re-inserting the
 * record; and the states read back as the words written, without CHAR's padding.
 */
describe.runIf(testDialects().includes("mysql"))("edges and batch memberships on MariaDB", () => {
  const env = new TestEnv("mysql");
  beforeAll(() => env.setup());
  afterEach(() => env.reset());
  afterAll(() => env.teardown());

  /** The row format and state column type of the two tables, in table order. */
  async function layout(db: Db) {
    const { rows } = await sql<{ table: string; format: string; type: string }>`
      SELECT t.TABLE_NAME AS \`table\`, t.ROW_FORMAT AS format, c.COLUMN_TYPE AS type
      FROM information_schema.TABLES t
      JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME
      WHERE t.TABLE_SCHEMA = DATABASE()
        AND (t.TABLE_NAME, c.COLUMN_NAME) IN (('firm_queue_job_dependencies', 'dependency_state'), ('firm_queue_batch_jobs', 'state'))
      ORDER BY t.TABLE_NAME`.execute(db);
    return rows;
  }
  const IN_PLACE = [
    { table: "firm_queue_batch_jobs", format: "Redundant", type: "char(16)" },
    { table: "firm_queue_job_dependencies", format: "Redundant", type: "char(16)" },
  ];

  /** Each table's states, in id order. */
  async function states(db: Db) {
    const edges = await db.selectFrom("firm_queue_job_dependencies").select("dependency_state").orderBy("id").execute();
    const members = await db.selectFrom("firm_queue_batch_jobs").select("state").orderBy("id").execute();
    return { edges: edges.map((row) => row.dependency_state), members: members.map((row) => row.state) };
  }

  it("keep room for their state in the row, and read it back unpadded", async () => {
    const db = await env.db();
    expect(await layout(db)).toEqual(IN_PLACE);
    const firm = env.firm();
    firm.defineJob("child", async () => {});
    firm.defineJob("parent", async () => {});
    const flow = await firm.flow({ name: "parent", args: null, children: [{ name: "child", args: null }] });
    const batch = await firm.batch([{ name: "child", args: null }]);
    expect(await firm.drain()).toBe(3);
    const edge = await db
      .selectFrom("firm_queue_job_dependencies")
      .select("dependency_state")
      .executeTakeFirstOrThrow();
    expect(edge.dependency_state).toBe("finished");
    const member = await db
      .selectFrom("firm_queue_batch_jobs")
      .select("state")
      .where("batch_id", "=", batch.id)
      .executeTakeFirstOrThrow();
    expect(member.state).toBe("finished");
    expect((await firm.getJob(flow.id!))?.state).toBe("finished");
    expect(await firm.getBatch(batch.id)).toMatchObject({ state: "finished", finished: 1, pending: 0 });
  });

  it("migration 019 keeps the open and ended states of a database holding a flow and a batch, which then end", async () => {
    const fresh = await createTestDatabase("mysql");
    const firm = new FirmQueue({ databaseUrl: fresh.url, logger: silentLogger });
    try {
      const database = await firm.database();
      const before = await migrateBefore(database, "mysql", "019_workflow_states_in_place");
      firm.defineJob("child", async () => {});
      firm.defineJob("parent", async () => {});
      const children = ["a", "b"].map((queue) => ({ name: "child", args: { queue }, options: { queue } }));
      const flow = await firm.flow({ name: "parent", args: null, options: { queue: "c" }, children });
      const batch = await firm.batch(children);
      // One child of each ended before the migration, one still open.
      expect(await firm.drain({ queues: "a" })).toBe(2);
      const written = await states(database.db);
      expect(written).toEqual({ edges: ["finished", null], members: ["finished", null] });

      expect(await firm.migrate()).toEqual(MIGRATIONS.slice(before).map((migration) => migration.version));
      expect(await layout(database.db)).toEqual(IN_PLACE);
      expect(await states(database.db)).toEqual(written);
      expect(await firm.drain()).toBe(3);
      expect(await states(database.db)).toEqual({ edges: ["finished", "finished"], members: ["finished", "finished"] });
      expect((await firm.getJob(flow.id!))?.state).toBe("finished");
      expect(await firm.getBatch(batch.id)).toMatchObject({ state: "finished", finished: 2, pending: 0 });
    } finally {
      await firm.close();
      await fresh.drop();
    }
  });
});
