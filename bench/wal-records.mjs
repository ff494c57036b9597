// node bench/wal-records.mjs [--jobs 20000] [--concurrency 24] [--delete] [--what-if "SQL"] [--url postgres://…]
//
// Where the write-ahead log of a durable PostgreSQL drain goes: one in-process worker drains
// `jobs` no-op jobs on a throwaway durable server (or on `--url`'s), and pg_walinspect (shipped
// with PostgreSQL 15) sums the WAL records written meanwhile by kind, per job: how many, their
// bytes, and the bytes of full-page images among them. A CHECKPOINT comes just before the drain,
// so every page the drain touches first is written whole once (as after any checkpoint).
// `--delete` runs with `preserveFinishedJobs: false`; `--what-if "SQL"` runs a schema change after
// migrating (e.g. an index dropped), as bench/durable-path.mjs does. npm run build first.
import { parseArgs } from "node:util";
import pg from "pg";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { benchDatabase } from "./databases.mjs";
import { noopBacklogOn } from "./noop-backlog.mjs";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "24" },
    delete: { type: "boolean", default: false },
    "what-if": { type: "string" },
    url: { type: "string" },
    top: { type: "string", default: "12" },
  },
});
const jobs = Number(values.jobs);
const concurrency = Number(values.concurrency);

const server = values.url ? undefined : await startPostgres({ durable: true });
try {
  const database = await benchDatabase("postgres", values.url ?? server.url);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query("CREATE EXTENSION IF NOT EXISTS pg_walinspect");
    const whatIf = values["what-if"];
    const { firm, finished } = await noopBacklogOn("firm-queue", database.url, {
      jobs,
      concurrency,
      options: { preserveFinishedJobs: !values.delete },
      beforeEnqueue: whatIf ? () => client.query(whatIf) : undefined,
    });
    await client.query("CHECKPOINT");
    const position = async () => (await client.query("SELECT pg_current_wal_lsn() AS lsn")).rows[0].lsn;
    const start = await position();
    const started = performance.now();
    const supervisor = await firm.start({ workers: [{ concurrency, pollingInterval: 10 }], dispatchers: [] });
    await finished;
    const rate = jobs / ((performance.now() - started) / 1000);
    await supervisor.stop();
    await firm.close();
    const end = await position();
    const { rows } = await client.query(
      `SELECT "resource_manager/record_type" AS kind, count, record_size, fpi_size, combined_size
       FROM pg_get_wal_stats($1, $2, true) WHERE count > 0 ORDER BY combined_size DESC`,
      [start, end],
    );
    const perJob = (value) => Number(value) / jobs;
    const total = rows.reduce((sum, row) => sum + perJob(row.combined_size), 0);
    console.log(
      `${jobs} jobs at concurrency ${concurrency}${values.delete ? ", finished jobs deleted" : ""}${values["what-if"] ? `, what-if: ${values["what-if"]}` : ""}: ${Math.round(rate)} jobs/s, ${Math.round(total)} bytes of WAL per job`,
    );
    console.log("| record | per job | record bytes per job | full-page image bytes per job |");
    console.log("|---|---:|---:|---:|");
    for (const row of rows.slice(0, Number(values.top)))
      console.log(
        `| ${row.kind} | ${perJob(row.count).toFixed(2)} | ${Math.round(perJob(row.record_size))} | ${Math.round(perJob(row.fpi_size))} |`,
      );
  } finally {
    await client.end();
    await database.cleanup();
  }
} finally {
  await server?.stop();
}
