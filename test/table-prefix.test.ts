import { MIGRATIONS } from "../src/database/migrations/index.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { FirmQueue } from "../src/index.js";
import { resolveCliConfig } from "../src/cli/config.js";
import { migrationScript } from "../src/database/schema-version.js";
import {
  checkTablePrefix,
  MAX_IDENTIFIER_LENGTH,
  MAX_TABLE_PREFIX_LENGTH,
  TableNames,
  TablePrefixError,
} from "../src/database/table-prefix.js";
import { insertRecurringExecution, isDuplicateTick } from "../src/models/recurring-execution.js";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";

const OTHER = "other_q_";
/** The longest prefix accepted: the longest names must still fit every database. */
const LONGEST = `${"z".repeat(MAX_TABLE_PREFIX_LENGTH - 1)}_`;

describe("the tablePrefix option", () => {
  it("accepts short lower-case identifier prefixes and rejects anything else with a TablePrefixError", () => {
    for (const good of ["a", "_", "billing_q_", "q2_", LONGEST]) expect(checkTablePrefix(good)).toBe(good);
    for (const bad of ["", "Jobs_", "2q_", "my-q_", "q;drop_", "q _", "é_", `${LONGEST}x`, 7, null]) {
      expect(() => checkTablePrefix(bad)).toThrow(TablePrefixError);
      expect(() => new FirmQueue({ databaseUrl: "sqlite::memory:", tablePrefix: bad as string })).toThrow(
        TablePrefixError,
      );
    }
  });

  it("comes from FIRM_QUEUE_TABLE_PREFIX when not given, and a bad variable is an error naming it", () => {
    const saved = process.env.FIRM_QUEUE_TABLE_PREFIX;
    try {
      process.env.FIRM_QUEUE_TABLE_PREFIX = "env_q_";
      expect(new FirmQueue({ databaseUrl: "sqlite::memory:" }).options.tablePrefix).toBe("env_q_");
      expect(new FirmQueue({ databaseUrl: "sqlite::memory:", tablePrefix: "opt_" }).options.tablePrefix).toBe("opt_");
      process.env.FIRM_QUEUE_TABLE_PREFIX = "";
      expect(() => new FirmQueue({ databaseUrl: "sqlite::memory:" })).toThrow(/FIRM_QUEUE_TABLE_PREFIX must be/);
      delete process.env.FIRM_QUEUE_TABLE_PREFIX;
      expect(new FirmQueue({ databaseUrl: "sqlite::memory:" }).options.tablePrefix).toBe("firm_queue_");
    } finally {
      if (saved === undefined) delete process.env.FIRM_QUEUE_TABLE_PREFIX;
      else process.env.FIRM_QUEUE_TABLE_PREFIX = saved;
    }
  });

  it("is a config file key, a variable and a flag of start and check, each overriding the one before", async () => {
    const dir = mkdtempSync(join(tmpdir(), "firm-queue-prefix-config-"));
    writeFileSync(join(dir, "firm-queue.config.mjs"), 'export default { tablePrefix: "file_q_" };\n');
    expect((await resolveCliConfig({}, {}, dir)).tablePrefix).toBe("file_q_");
    const env = { FIRM_QUEUE_TABLE_PREFIX: "env_q_" };
    expect((await resolveCliConfig({}, env, dir)).tablePrefix).toBe("env_q_");
    expect((await resolveCliConfig({ tablePrefix: "flag_q_" }, env, dir)).tablePrefix).toBe("flag_q_");
    await expect(resolveCliConfig({ tablePrefix: "Flag" }, {}, dir)).rejects.toThrow(/--table-prefix must be/);
    writeFileSync(join(dir, "bad.config.mjs"), 'export default { tablePrefix: "file-q" };\n');
    await expect(resolveCliConfig({ config: join(dir, "bad.config.mjs") }, {}, dir)).rejects.toThrow(
      /bad\.config\.mjs: tablePrefix must be/,
    );
  });

  it("keeps every name the migrations create within PostgreSQL's 63 characters at the longest prefix", async () => {
    const names = new TableNames(LONGEST);
    for (const dialect of ["sqlite", "postgres", "mysql"] as const) {
      const script = await migrationScript(dialect, names);
      expect(script).not.toContain("firm_queue_");
      const identifiers = script.match(new RegExp(`\\b(?:index_)?${LONGEST}\\w*`, "g")) ?? [];
      expect(identifiers.length).toBeGreaterThan(40);
      const longest = identifiers.reduce((a, b) => (b.length > a.length ? b : a));
      expect(longest.length, longest).toBeLessThanOrEqual(MAX_IDENTIFIER_LENGTH);
    }
  });
});

describeEachDatabase("two table prefixes on one database", (env) => {
  it("are two independent queues: each instance runs, counts and fails only its own jobs", async () => {
    const ours = env.firm();
    const other = env.firm({ tablePrefix: OTHER });
    expect(await other.migrate()).toHaveLength(MIGRATIONS.length);
    const ran = { ours: [] as string[], other: [] as string[] };
    for (const [name, firm] of [
      ["ours", ours],
      ["other", other],
    ] as const) {
      firm.defineJob("work", async (args: { tag: string }) => void ran[name].push(args.tag), {
        concurrency: { key: "one", to: 1 },
      });
      firm.defineJob(
        "boom",
        async () => {
          throw new Error(`boom in ${name}`);
        },
        { retry: { attempts: 1 } },
      );
    }
    await ours.enqueue("work", { tag: "ours-now" });
    await ours.enqueue("work", { tag: "ours-later" }, { wait: "200ms" });
    await other.enqueue("work", { tag: "other-now" });
    await other.enqueue("work", { tag: "other-blocked" });
    await other.enqueue("work", { tag: "other-later" }, { wait: "200ms" });
    const failedId = (await other.enqueue("boom", null)).id;
    expect((await other.inspect.queues())[0]).toMatchObject({ name: "default", ready: 2, blocked: 1, scheduled: 1 });
    expect((await ours.inspect.queues())[0]).toMatchObject({ name: "default", ready: 1, blocked: 0, scheduled: 1 });

    const supervisors = await Promise.all(
      [ours, other].map((firm) =>
        firm.start({ workers: [{ pollingInterval: 50 }], dispatchers: [{ pollingInterval: 50 }] }),
      ),
    );
    try {
      const finished = async (firm: FirmQueue) => (await firm.inspect.jobs({ state: "finished" })).jobs.length;
      // Handlers run before their outcome is written: wait for the rows, not just the handlers.
      await waitFor(
        async () => (await finished(ours)) === 2 && (await finished(other)) === 3,
        15_000,
        "both queues to finish their jobs",
      );
      await waitFor(async () => (await other.failedJobs.list()).length === 1, 15_000, "the failing job to fail");
      expect(ran.ours.sort()).toEqual(["ours-later", "ours-now"]);
      expect(ran.other.sort()).toEqual(["other-blocked", "other-later", "other-now"]);
      expect(await ours.failedJobs.list()).toEqual([]);
      const failed = await other.failedJobs.list();
      expect(failed.map((job) => job.id)).toEqual([failedId]);
      expect((await other.inspect.processes()).length).toBeGreaterThan(1);
      expect((await other.inspect.jobs({ state: "failed" })).jobs.map((job) => job.id)).toEqual([failedId]);
    } finally {
      await Promise.all(supervisors.map((supervisor) => supervisor.stop()));
    }
    const ourDb = (await ours.database()).db;
    const otherDb = (await other.database()).db;
    expect(await countRows(ourDb, "firm_queue_jobs")).toBe(2);
    expect(await countRows(otherDb, "firm_queue_jobs")).toBe(4);
    const tables = await ourDb.introspection.getTables();
    expect(
      tables
        .filter((table) => table.name.startsWith(OTHER))
        .map((table) => table.name)
        .sort(),
    ).toEqual(
      tables
        .filter((table) => table.name.startsWith(ours.options.tablePrefix))
        .map((table) => table.name.replace(ours.options.tablePrefix, OTHER))
        .sort(),
    );
    // The other instance's tables are cleared here: the harness empties the default ones only.
    await otherDb.deleteFrom("firm_queue_jobs").execute();
    await otherDb.deleteFrom("firm_queue_processes").execute();
    await otherDb.deleteFrom("firm_queue_semaphores").execute();
  });

  it("recognizes a duplicate recurring tick by the prefixed unique index", async () => {
    const firm = env.firm({ tablePrefix: LONGEST });
    await firm.migrate();
    const database = await firm.database();
    const job = firm.defineJob("tick", async () => undefined);
    const [first, second] = (await job.enqueueAll([null, null])).map((result) => result.id) as number[];
    const runAt = new Date("2026-01-01T00:00:00Z");
    const record = (jobId: number) =>
      database.writeTransaction((trx) => insertRecurringExecution(trx, { jobId, taskKey: "t", runAt }, new Date()));
    await record(first!);
    // Same task and tick, another job: a violation of the (task_key, run_at) index, the longest name.
    const error = await record(second!).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeDefined();
    expect(isDuplicateTick(database.dialect, error)).toBe(true);
    // The database's own dialect, which knows only the default names, would not recognize it.
    expect(isDuplicateTick(database.adapter.dialect, error)).toBe(false);
    await database.db.deleteFrom("firm_queue_jobs").execute();
  });
});

describeEachDatabase(
  "wake-ups with two table prefixes",
  (env) => {
    it("NOTIFY goes out on the prefix's own channel, and wakes that prefix's idle workers", async () => {
      const other = env.firm({ tablePrefix: OTHER });
      await other.migrate();
      const listener = new pg.Client({ connectionString: env.url });
      await listener.connect();
      const heard: string[] = [];
      listener.on("notification", (message) => heard.push(message.channel));
      // The harness's own prefix: firm_queue_, unless FIRM_QUEUE_TABLE_PREFIX says otherwise.
      const oursChannel = `${env.firm().options.tablePrefix}ready`;
      await listener.query(`LISTEN ${oursChannel}`);
      await listener.query(`LISTEN ${OTHER}ready`);
      const ran: number[] = [];
      other.defineJob("wake", async (_args, context) => void ran.push(context.jobId));
      // A minute between polls: only a notification can start the job in time.
      const supervisor = await other.start({ workers: [{ pollingInterval: 60_000 }], dispatchers: [] });
      try {
        await new Promise((resolve) => setTimeout(resolve, 300));
        const producer = env.firm({ tablePrefix: OTHER });
        const id = (await producer.enqueue("wake", null, { undeclared: true })).id;
        await waitFor(() => ran.includes(id!), 10_000, "the notified worker to run the job");
        await waitFor(() => heard.includes(`${OTHER}ready`), 5_000, "the other prefix's notification");
        expect(heard).not.toContain(oursChannel);
        const ours = env.firm();
        await ours.enqueue("wake", null, { undeclared: true });
        await waitFor(() => heard.includes(oursChannel), 5_000, "the default prefix's notification");
        expect(heard.filter((channel) => channel === `${OTHER}ready`)).toHaveLength(1);
      } finally {
        await supervisor.stop();
        await listener.end();
      }
      await (await other.database()).db.deleteFrom("firm_queue_jobs").execute();
    });

    it("a prefix inside a schema: the schema keeps its own name, the tables take the prefix", async () => {
      // A schema name containing the default prefix must not be renamed along with the tables.
      const firm = env.firm({ schema: "firm_queue_area", tablePrefix: OTHER });
      await firm.migrate();
      firm.defineJob("in-schema", async () => undefined);
      await firm.enqueue("in-schema", null);
      expect(await firm.drain()).toBe(1);
      const client = new pg.Client({ connectionString: env.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ schemaname: string; tablename: string }>(
          "SELECT schemaname, tablename FROM pg_tables WHERE tablename LIKE 'other\\_q\\_%' AND schemaname <> 'public'",
        );
        expect(new Set(rows.map((row) => row.schemaname))).toEqual(new Set(["firm_queue_area"]));
        expect(rows.map((row) => row.tablename)).toContain(`${OTHER}jobs`);
        // Every table of the default prefix has its twin in the schema (the schema's own migrations table too).
        expect(rows).toHaveLength(19);
      } finally {
        await client.query("DROP SCHEMA firm_queue_area CASCADE");
        await client.end();
      }
    });
  },
  ["postgres"],
);
