// npm run bench:dashboard -- [--jobs 1000000] [--ready 50000] [--rounds 7] [--url postgres://…] [--keep]
//
// Page render time of the dashboard on PostgreSQL with a big jobs table. Fills a fresh database
// with --jobs jobs in one go (generate_series): most finished over the last 24 hours, the rest
// failed, scheduled, blocked, claimed and --ready ready, over 10 queues and 20 job names, with
// processes, semaphores and recurring runs, and workflows (a job with 10,000 dependents, one with
// 10,000 dependencies, 1,000 batches, one of them of 10,000 jobs). Then it requests every page through the Node
// handler over loopback, --rounds times each after one warm-up, and prints the median and the
// slowest round in milliseconds (request sent → whole body read). The budget is 200 ms a page.
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { FirmQueue, createDashboard, silentLogger } from "firm-queue";
import { benchDatabase } from "./databases.mjs";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "1000000" },
    ready: { type: "string", default: "50000" },
    rounds: { type: "string", default: "7" },
    url: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
const total = Number(values.jobs);
const rounds = Number(values.rounds);
const counts = { failed: 20_000, scheduled: 20_000, blocked: 5_000, claimed: 100, ready: Number(values.ready) };
counts.finished = total - counts.failed - counts.scheduled - counts.blocked - counts.claimed - counts.ready;
if (counts.finished < 0) throw new Error("--jobs is smaller than the unfinished jobs it needs");
/**
 * Where the workflow rows sit: finished jobs 1 to 69,970 serve as their members (the finished range
 * starts at 1), so every row points at a real job. Job `fanOut` has 10,000 dependents, job `fanIn`
 * 10,000 dependencies, and batch 1 of 1,000 has 10,000 jobs (the others 30 each).
 */
const WORKFLOW = { fanOut: 1, fanIn: 2, bigBatch: 1, batches: 1000 };

process.stderr.write("preparing PostgreSQL…\n");
const database = await benchDatabase("postgres", values.url);
const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger });
let server;
try {
  await firm.migrate();
  const started = Date.now();
  await fill(database.url);
  process.stderr.write(
    `filled ${total.toLocaleString("en-US")} jobs in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );

  const dashboard = createDashboard({ firm, allowUnauthenticated: true });
  server = createServer(dashboard.node);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const ids = await sampleIds(firm);
  const pages = [
    ["overview", "/"],
    ["queue page (ready)", "/queues/queue_3"],
    ["jobs: ready, first page", "/jobs?state=ready"],
    ["jobs: ready, deep page (cursor)", `/jobs?state=ready&cursor=${ids.readyCursor}`],
    ["jobs: finished, first page", "/jobs?state=finished"],
    ["jobs: finished, deep page (cursor)", `/jobs?state=finished&cursor=${ids.finishedCursor}`],
    ["jobs: finished, queue + name filter", "/jobs?state=finished&queue=queue_7&name=Job7"],
    ["jobs: finished, 1-hour range 12 h ago", `/jobs?state=finished&from=${ids.from}&to=${ids.to}`],
    ["jobs: scheduled", "/jobs?state=scheduled"],
    ["failed jobs", "/failed"],
    ["failed jobs, queue filter", "/failed?queue=queue_4"],
    ["job page", `/jobs/${ids.failed}`],
    ["processes", "/processes"],
    ["recurring tasks", "/recurring"],
    ["concurrency", "/concurrency"],
    ["job page, 10,000 dependents", `/jobs/${WORKFLOW.fanOut}`],
    ["job page, 10,000 dependencies", `/jobs/${WORKFLOW.fanIn}`],
    ["batches, first page", "/batches"],
    ["batches, deep page (cursor)", `/batches?cursor=${ids.batchesCursor}`],
    ["batch page, 10,000 jobs, first page", `/batches/${WORKFLOW.bigBatch}`],
    ["batch page, 10,000 jobs, deep page (cursor)", `/batches/${WORKFLOW.bigBatch}?cursor=${ids.batchJobsCursor}`],
  ];
  const rows = [];
  for (const [name, path] of pages) {
    await timed(base + path); // warm-up: plans and caches
    const times = [];
    for (let round = 0; round < rounds; round += 1) times.push(await timed(base + path));
    times.sort((a, b) => a - b);
    rows.push({ name, median: times[Math.floor(times.length / 2)], max: times.at(-1) });
  }
  console.log(
    `\nDashboard page render time, PostgreSQL, ${total.toLocaleString("en-US")} jobs (${Object.entries(counts)
      .map(([state, n]) => `${n.toLocaleString("en-US")} ${state}`)
      .join(", ")}), ${rounds} rounds, node ${process.version}, load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(" ")}\n`,
  );
  console.log("| page | median (ms) | slowest (ms) |");
  console.log("|---|---:|---:|");
  for (const row of rows) console.log(`| ${row.name} | ${row.median.toFixed(1)} | ${row.max.toFixed(1)} |`);
  const over = rows.filter((row) => row.median > 200);
  console.log(
    over.length === 0
      ? "\nEvery page's median is within the 200 ms budget."
      : `\nOver the 200 ms budget: ${over.map((row) => row.name).join(", ")}`,
  );
} finally {
  if (server) await new Promise((resolve) => server.close(resolve));
  await firm.close();
  // --keep (with --url): leave the filled database for EXPLAIN sessions.
  if (values.keep && values.url) console.log(`\nkept: ${database.url}`);
  else await database.cleanup();
}

async function timed(url) {
  const start = performance.now();
  const response = await fetch(url);
  await response.text();
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}`);
  return performance.now() - start;
}

/** Fill the tables with SQL on the server: ids 1..N in state blocks, newest finished last. */
async function fill(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const f = counts.finished;
    const ranges = {};
    let next = f + 1;
    for (const state of ["failed", "scheduled", "blocked", "claimed", "ready"]) {
      ranges[state] = [next, next + counts[state] - 1];
      next += counts[state];
    }
    await client.query(
      `INSERT INTO firm_queue_jobs (id, queue_name, class_name, arguments, priority, attempts, scheduled_at, finished_at, concurrency_key, created_at, updated_at)
       SELECT i, 'queue_' || (i % 10), 'Job' || (i % 20), '{"order":' || i || ',"note":"bench <b>job</b>"}', 0, CASE WHEN i <= $1 THEN 1 ELSE 0 END,
              now() - interval '1 day' + (i * interval '1 second' * 86400 / $2) + CASE WHEN i BETWEEN $3 AND $4 THEN interval '2 days' ELSE interval '0' END,
              CASE WHEN i <= $1 THEN now() - interval '1 day' + (i * interval '1 second' * 86400 / $1) END,
              CASE WHEN i BETWEEN $5 AND $6 OR i BETWEEN $7 AND $8 THEN 'Job' || (i % 20) || '/account-' || (i % 100) END,
              now() - interval '1 day' + (i * interval '1 second' * 86400 / $2), now()
       FROM generate_series(1, $2::bigint) AS i`,
      [
        f,
        total,
        ranges.scheduled[0],
        ranges.scheduled[1],
        ranges.blocked[0],
        ranges.blocked[1],
        ranges.claimed[0],
        ranges.claimed[1],
      ],
    );
    await client.query(`SELECT setval(pg_get_serial_sequence('firm_queue_jobs', 'id'), $1)`, [total]);
    const jobsIn = (state) => `FROM firm_queue_jobs j WHERE j.id BETWEEN ${ranges[state][0]} AND ${ranges[state][1]}`;
    await client.query(
      `INSERT INTO firm_queue_failed_executions (job_id, error, created_at) SELECT j.id, '{"name":"TypeError","message":"bench failure","stack":"TypeError: bench failure\\n    at bench"}', j.created_at ${jobsIn("failed")}`,
    );
    await client.query(
      `UPDATE firm_queue_jobs SET attempts = 1 WHERE id BETWEEN ${ranges.failed[0]} AND ${ranges.failed[1]}`,
    );
    await client.query(
      `INSERT INTO firm_queue_scheduled_executions (job_id, queue_name, priority, scheduled_at, created_at) SELECT j.id, j.queue_name, 0, j.scheduled_at, j.created_at ${jobsIn("scheduled")}`,
    );
    await client.query(
      `INSERT INTO firm_queue_blocked_executions (job_id, queue_name, priority, concurrency_key, expires_at, created_at) SELECT j.id, j.queue_name, 0, j.concurrency_key, now() + interval '3 minutes', j.created_at ${jobsIn("blocked")}`,
    );
    await client.query(
      `INSERT INTO firm_queue_ready_executions (job_id, queue_name, priority, created_at) SELECT j.id, j.queue_name, 0, j.created_at ${jobsIn("ready")}`,
    );
    const supervisor = await client.query(
      `INSERT INTO firm_queue_processes (kind, last_heartbeat_at, pid, hostname, metadata, name, created_at) VALUES ('Supervisor', now(), 1, 'bench', '{}', 'supervisor-bench', now()) RETURNING id`,
    );
    const supervisorId = supervisor.rows[0].id;
    await client.query(
      `INSERT INTO firm_queue_processes (kind, last_heartbeat_at, supervisor_id, pid, hostname, metadata, name, created_at)
       SELECT 'Worker', now(), $1, 100 + w, 'bench', '{"queues":"*","concurrency":10}', 'worker-' || w, now() FROM generate_series(1, 10) AS w`,
      [supervisorId],
    );
    await client.query(
      `INSERT INTO firm_queue_claimed_executions (job_id, process_id, created_at)
       SELECT j.id, (SELECT id FROM firm_queue_processes WHERE name = 'worker-' || (1 + j.id % 10)), now() ${jobsIn("claimed")}`,
    );
    await client.query(
      `INSERT INTO firm_queue_semaphores (key, value, expires_at, created_at, updated_at) SELECT DISTINCT concurrency_key, 0, now() + interval '3 minutes', now(), now() FROM firm_queue_jobs WHERE concurrency_key IS NOT NULL`,
    );
    await client.query(
      `INSERT INTO firm_queue_recurring_tasks (key, schedule, class_name, arguments, static, created_at, updated_at)
       SELECT 'task-' || t, '*/5 * * * *', 'Job' || t, '{}', true, now(), now() FROM generate_series(1, 10) AS t`,
    );
    // Each task's runs point at finished jobs: 1,000 runs per task.
    await client.query(
      `INSERT INTO firm_queue_recurring_executions (job_id, task_key, run_at, created_at)
       SELECT j.id, 'task-' || (1 + j.id % 10), j.created_at, j.created_at FROM firm_queue_jobs j WHERE j.id <= 10000`,
    );
    await fillWorkflows(client);
    // A table that has been in use this long has been vacuumed by autovacuum; index-only scans need it.
    await client.query("VACUUM ANALYZE");
  } finally {
    await client.end();
  }
}

/** Dependency edges and batches, written as firm.batch and dependsOn would have left them. */
async function fillWorkflows(client) {
  await client.query(
    `INSERT INTO firm_queue_job_dependencies (job_id, dependency_id, position, on_failure, dependency_name, dependency_state, created_at)
     SELECT i, $1, 0, 'cancel', 'Job1', 'finished', now() FROM generate_series(10001, 20000) AS i`,
    [WORKFLOW.fanOut],
  );
  await client.query(
    `INSERT INTO firm_queue_job_dependencies (job_id, dependency_id, position, on_failure, dependency_name, dependency_state, created_at)
     SELECT $1, i, i - 20001, 'cancel', 'Job' || (i % 20), 'finished', now() FROM generate_series(20001, 30000) AS i`,
    [WORKFLOW.fanIn],
  );
  await client.query(
    `INSERT INTO firm_queue_batches (id, state, total, pending, finished, failed, cancelled, callbacks, created_at, updated_at, ended_at)
     SELECT b, 'finished', CASE WHEN b = 1 THEN 10000 ELSE 30 END, 0, CASE WHEN b = 1 THEN 10000 ELSE 30 END, 0, 0,
            '{"onFinish":{"name":"Job1","arguments":"{}","queue":"queue_1","priority":0,"concurrencyKey":null,"rateLimitKey":null}}',
            now() - interval '1 day' + b * interval '1 minute', now(), now()
     FROM generate_series(1, $1::bigint) AS b`,
    [WORKFLOW.batches],
  );
  await client.query(`SELECT setval(pg_get_serial_sequence('firm_queue_batches', 'id'), $1)`, [WORKFLOW.batches]);
  // Batch 1: jobs 30,001-40,000; batches 2-1,000: 30 jobs each from 40,001 on.
  await client.query(
    `INSERT INTO firm_queue_batch_jobs (batch_id, job_id, state, created_at)
     SELECT CASE WHEN i <= 40000 THEN 1 ELSE 2 + (i - 40001) / 30 END, i, 'finished', now()
     FROM generate_series(30001, 40000 + ($1::bigint - 1) * 30) AS i`,
    [WORKFLOW.batches],
  );
  await client.query(`UPDATE firm_queue_jobs SET batch_id = 1, has_dependents = 1 WHERE id BETWEEN 30001 AND 40000`);
}

/** Cursors and ids for the deep pages, read through the public API. */
async function sampleIds(firm) {
  let ready = await firm.inspect.jobs({ state: "ready", limit: 500 });
  for (let page = 0; page < 40 && ready.nextCursor; page += 1)
    ready = await firm.inspect.jobs({ state: "ready", limit: 500, cursor: ready.nextCursor });
  let finished = await firm.inspect.jobs({ state: "finished", limit: 500 });
  for (let page = 0; page < 400 && finished.nextCursor; page += 1)
    finished = await firm.inspect.jobs({ state: "finished", limit: 500, cursor: finished.nextCursor });
  const failed = (await firm.inspect.jobs({ state: "failed", limit: 1 })).jobs[0].id;
  let batches = await firm.inspect.batches({ limit: 500 });
  batches = await firm.inspect.batches({ limit: 450, cursor: batches.nextCursor });
  let batchJobs = await firm.inspect.batch(WORKFLOW.bigBatch, { limit: 500 });
  for (let page = 0; page < 18 && batchJobs.nextCursor; page += 1)
    batchJobs = await firm.inspect.batch(WORKFLOW.bigBatch, { limit: 500, cursor: batchJobs.nextCursor });
  const from = new Date(Date.now() - 12 * 3_600_000);
  const to = new Date(from.getTime() + 3_600_000);
  return {
    readyCursor: encodeURIComponent(ready.nextCursor ?? ""),
    finishedCursor: encodeURIComponent(finished.nextCursor ?? ""),
    failed,
    batchesCursor: encodeURIComponent(batches.nextCursor ?? ""),
    batchJobsCursor: encodeURIComponent(batchJobs.nextCursor ?? ""),
    from: from.toISOString().slice(0, 19),
    to: to.toISOString().slice(0, 19),
  };
}
