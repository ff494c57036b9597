// npm run bench:metrics -- [--jobs 1000000] [--ready 50000] [--failed 20000] [--rounds 7] [--url postgres://…]
//
// What one uncached read of the metrics gauges costs on PostgreSQL with a big jobs table. Fills
// a fresh database with --jobs jobs on the server (generate_series): --ready ready, --failed
// failed, 20,000 scheduled, 100 claimed, the rest finished, over 10 queues; 11 processes. Then
// it scrapes `firm.metrics.text()` with the gauge cache off (every scrape reads the database),
// --rounds times after one warm-up, prints the median and the slowest, and prints the plans
// (EXPLAIN ANALYZE) of the grouped counts behind the gauges.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { FirmQueue, silentLogger } from "firm-queue";
import { benchDatabase } from "./databases.mjs";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "1000000" },
    ready: { type: "string", default: "50000" },
    failed: { type: "string", default: "20000" },
    rounds: { type: "string", default: "7" },
    url: { type: "string" },
  },
});
const total = Number(values.jobs);
const ready = Number(values.ready);
const failed = Number(values.failed);
const scheduled = 20_000;
const claimed = 100;
const finished = total - ready - failed - scheduled - claimed;
if (finished < 0) throw new Error("--jobs is smaller than the unfinished jobs it needs");

process.stderr.write("preparing PostgreSQL…\n");
const database = await benchDatabase("postgres", values.url);
const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger });
const client = new pg.Client({ connectionString: database.url });
try {
  await firm.migrate();
  await client.connect();
  const started = Date.now();
  await fill();
  process.stderr.write(
    `filled ${total.toLocaleString("en-US")} jobs in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  firm.metrics.configure({ gaugeInterval: 0 });
  await firm.metrics.text(); // warm-up: plans and caches
  const times = [];
  for (let round = 0; round < Number(values.rounds); round += 1) {
    const start = performance.now();
    const text = await firm.metrics.text();
    times.push(performance.now() - start);
    if (!text.includes("firm_queue_database_up 1")) throw new Error("the gauges were not read");
  }
  times.sort((a, b) => a - b);
  firm.metrics.configure({ gaugeInterval: "15s" });
  await firm.metrics.text();
  const cachedStart = performance.now();
  await firm.metrics.text();
  const cached = performance.now() - cachedStart;
  console.log(
    `\nMetrics scrape, PostgreSQL, ${total.toLocaleString("en-US")} jobs (${ready.toLocaleString("en-US")} ready, ` +
      `${failed.toLocaleString("en-US")} failed, ${scheduled.toLocaleString("en-US")} scheduled, ${claimed} claimed, ` +
      `${finished.toLocaleString("en-US")} finished), node ${process.version}, load average ${loadavg()
        .map((load) => load.toFixed(1))
        .join(" ")}\n`,
  );
  console.log("| scrape | median (ms) | slowest (ms) |");
  console.log("|---|---:|---:|");
  console.log(
    `| gauges read from the database | ${times[Math.floor(times.length / 2)].toFixed(1)} | ${times.at(-1).toFixed(1)} |`,
  );
  console.log(`| gauges from the cache | ${cached.toFixed(1)} | |`);
  for (const [name, query] of [
    ["ready", "SELECT queue_name, COUNT(*), MIN(created_at) FROM firm_queue_ready_executions GROUP BY queue_name"],
    ["scheduled", "SELECT queue_name, COUNT(*) FROM firm_queue_scheduled_executions GROUP BY queue_name"],
    [
      "failed",
      "SELECT (SELECT j.queue_name FROM firm_queue_jobs j WHERE j.id = e.job_id) AS queue_name, COUNT(*) FROM firm_queue_failed_executions e GROUP BY 1",
    ],
  ]) {
    const plan = await client.query(`EXPLAIN (ANALYZE, COSTS OFF) ${query}`);
    console.log(`\nplan of the ${name} count:\n${plan.rows.map((row) => `    ${row["QUERY PLAN"]}`).join("\n")}`);
  }
} finally {
  await client.end().catch(() => undefined);
  await firm.close();
  await database.cleanup();
}

/** Ids 1..N: finished first, then failed, scheduled, claimed and ready blocks. */
async function fill() {
  await client.query(
    `INSERT INTO firm_queue_jobs (id, queue_name, class_name, arguments, priority, attempts, scheduled_at, finished_at, created_at, updated_at)
     SELECT i, 'queue_' || (i % 10), 'Job' || (i % 20), '{}', 0, 1, now() - interval '1 day',
            CASE WHEN i <= $1 THEN now() - interval '1 hour' END, now() - interval '1 day', now()
     FROM generate_series(1, $2::bigint) AS i`,
    [finished, total],
  );
  await client.query(`SELECT setval(pg_get_serial_sequence('firm_queue_jobs', 'id'), $1)`, [total]);
  let next = finished + 1;
  const block = (count) => {
    const range = `j.id BETWEEN ${next} AND ${next + count - 1}`;
    next += count;
    return `FROM firm_queue_jobs j WHERE ${range}`;
  };
  await client.query(
    `INSERT INTO firm_queue_failed_executions (job_id, error, created_at) SELECT j.id, '{"name":"Error","message":"bench"}', now() ${block(failed)}`,
  );
  await client.query(
    `INSERT INTO firm_queue_scheduled_executions (job_id, queue_name, priority, scheduled_at, created_at) SELECT j.id, j.queue_name, 0, now() + interval '1 day', now() ${block(scheduled)}`,
  );
  const supervisor = await client.query(
    `INSERT INTO firm_queue_processes (kind, last_heartbeat_at, pid, hostname, metadata, name, created_at) VALUES ('Supervisor', now(), 1, 'bench', '{}', 'supervisor-bench', now()) RETURNING id`,
  );
  await client.query(
    `INSERT INTO firm_queue_processes (kind, last_heartbeat_at, supervisor_id, pid, hostname, metadata, name, created_at)
     SELECT 'Worker', now(), $1, 100 + w, 'bench', '{}', 'worker-' || w, now() FROM generate_series(1, 10) AS w`,
    [supervisor.rows[0].id],
  );
  await client.query(
    `INSERT INTO firm_queue_claimed_executions (job_id, process_id, created_at) SELECT j.id, $1, now() ${block(claimed)}`,
    [supervisor.rows[0].id],
  );
  await client.query(
    `INSERT INTO firm_queue_ready_executions (job_id, queue_name, priority, created_at) SELECT j.id, j.queue_name, 0, j.created_at ${block(ready)}`,
  );
  // A table in use this long has been vacuumed by autovacuum; index-only scans need it.
  await client.query("VACUUM ANALYZE");
}
