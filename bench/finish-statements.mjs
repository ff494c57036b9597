// node bench/finish-statements.mjs [--database sqlite,postgres,mysql] [--kind plain,flow,batch]
//                                  [--jobs 5000] [--concurrency 24] [--top 14]
//
// Where a workflow's finishes spend their round trips: on each database (throwaway servers, not
// durable: the statements are what is counted), one in-process worker runs `jobs` plain no-op
// jobs, a flow of one parent over `jobs` children, or a batch of `jobs` jobs with an onFinish
// callback, while every statement the library sends is counted and timed by its text at the
// driver (pg's Client.query, mysql2's query/execute, better-sqlite3's run/all/get). Prints, per
// run, the statements per 1,000 jobs and their time, the costliest first (npm run build first).
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import mysql from "mysql2";
import pg from "pg";
import { DurableServers } from "./durable-servers.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "sqlite,postgres,mysql" },
    kind: { type: "string", default: "plain,flow,batch" },
    jobs: { type: "string", default: "5000" },
    concurrency: { type: "string", default: "24" },
    top: { type: "string", default: "14" },
    url: { type: "string" },
    "mysql-url": { type: "string" },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);

/** @type {Map<string, { n: number, ns: bigint }>} */
const times = new Map();
let counting = false;

function note(text, started) {
  const key = String(text)
    .replace(/\s+/g, " ")
    .replace(/\$\d+/g, "?")
    .replace(/(\?|\d+)(, (\?|\d+))+/g, "…")
    .replace(/\{[\d,]+\}/g, "{…}")
    .slice(0, 140);
  const entry = times.get(key) ?? { n: 0, ns: 0n };
  entry.n++;
  entry.ns += process.hrtime.bigint() - started;
  times.set(key, entry);
}

// better-sqlite3: synchronous calls, timed around the call.
const statementProto = Object.getPrototypeOf(new Database(":memory:").prepare("select 1"));
for (const method of ["run", "all", "get"]) {
  const original = statementProto[method];
  statementProto[method] = function (...args) {
    if (!counting) return original.apply(this, args);
    const started = process.hrtime.bigint();
    try {
      return original.apply(this, args);
    } finally {
      note(this.source, started);
    }
  };
}

// pg: a promise per query (the library passes no callback).
const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  const result = pgQuery.call(this, config, ...rest);
  if (!counting || typeof result?.then !== "function") return result;
  const started = process.hrtime.bigint();
  const text = typeof config === "string" ? config : config?.text;
  return result.finally(() => note(text, started));
};

// mysql2: a callback per query, its last argument.
const mysqlConnection = Object.getPrototypeOf(mysql.Connection.prototype);
for (const method of ["query", "execute"]) {
  const original = mysqlConnection[method];
  mysqlConnection[method] = function (sql, ...rest) {
    const callback = rest.at(-1);
    if (!counting || typeof callback !== "function") return original.call(this, sql, ...rest);
    const started = process.hrtime.bigint();
    const text = typeof sql === "string" ? sql : sql?.sql;
    rest[rest.length - 1] = (...results) => {
      note(text, started);
      return callback(...results);
    };
    return original.call(this, sql, ...rest);
  };
}

const { FirmQueue, silentLogger } = await import("firm-queue");
const servers = new DurableServers({ postgresUrl: values.url, mysqlUrl: values["mysql-url"] });
try {
  for (const dialect of values.database.split(","))
    for (const kind of values.kind.split(",")) {
      times.clear();
      const seconds = await run(dialect, kind);
      const total = [...times.values()].reduce((sum, entry) => sum + entry.n, 0);
      console.log(
        `\n## ${dialect} ${kind}: ${jobs} jobs in ${seconds.toFixed(2)} s, ${((total * 1000) / jobs).toFixed(0)} statements per 1,000 jobs`,
      );
      const rows = [...times.entries()].sort((a, b) => Number(b[1].ns - a[1].ns)).slice(0, Number(values.top));
      for (const [text, { n, ns }] of rows)
        console.log(
          `${((n * 1000) / jobs).toFixed(1).padStart(7)} /1000 jobs ${(Number(ns) / 1e6).toFixed(0).padStart(6)} ms  ${text}`,
        );
    }
} finally {
  await servers.stop();
}

async function run(dialect, kind) {
  const database = await servers.fresh(dialect);
  const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
  try {
    await firm.migrate();
    let done = 0;
    let reached;
    const finished = new Promise((resolve) => (reached = resolve));
    const total = kind === "plain" ? jobs : jobs + 1;
    const count = async () => {
      if (++done === total) reached();
    };
    const noop = firm.defineJob("noop", count);
    firm.defineJob("parent", count);
    firm.defineJob("callback", count);
    const args = Array.from({ length: jobs }, (_, i) => ({ i }));
    if (kind === "plain") for (let i = 0; i < jobs; i += 1000) await noop.enqueueAll(args.slice(i, i + 1000));
    else if (kind === "flow")
      await firm.flow({ name: "parent", args: {}, children: args.map((a) => ({ name: "noop", args: a })) });
    else
      await firm.batch(
        args.map((a) => ({ name: "noop", args: a })),
        { onFinish: { name: "callback", args: {} } },
      );
    counting = true;
    const started = performance.now();
    const supervisor = await firm.start({
      workers: [{ concurrency, pollingInterval: 10 }],
      dispatchers: [{ pollingInterval: 100 }],
    });
    await finished;
    const seconds = (performance.now() - started) / 1000;
    counting = false;
    await supervisor.stop();
    return seconds;
  } finally {
    counting = false;
    await firm.close();
    await database.cleanup();
  }
}
