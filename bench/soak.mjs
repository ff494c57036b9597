// npm run bench:soak -- --database sqlite|postgres|mysql [--minutes 60] [--rate 20] [--sample 15]
//                       [--admin-url url] [--record dir] [--out file.json]
// node bench/soak.mjs --analyse dir [--out file.json]   (a recorded run's summary, while it runs or after)
//
// A soak: a real `firm-queue start` in fork mode (two worker processes, a dispatcher, a scheduler
// with a task every 5 s; bench/soak/soak.config.mjs) and a `firm-queue dashboard` process run for
// `minutes` while this script enqueues `rate` jobs a second (10 % fail their first attempt and are
// retried, 10 % are scheduled a few seconds ahead) and a dashboard client fetches a page every 2 s.
// Every `sample` seconds it records, for the supervisor, each child and the dashboard, RSS and V8
// heap, both as found and right after a forced full collection (bench/soak/sampler.mjs is preloaded
// into each of them with `node --expose-gc --import`), the database connections open, and the rows
// of every firm-queue table. With --record the samples go to files in that directory as they are
// taken (memory.jsonl, database.jsonl, run.json, and summary.json at the end), so a run cut short
// still has them and `--analyse dir` summarises what it covered. At the end it stops enqueueing, lets
// the backlog drain, waits for the dispatcher's own cleanup of finished jobs (kept 2 min, cleared
// every 30 s), counts the tables again, stops everything with TERM and prints:
//   - per process: RSS and heap (as found, and live after a forced collection) at the start and end
//     of the steady part, and their slope in MB per hour (least squares over the samples after a
//     warm-up of 10 % of the run, at least 2 minutes and at most half), and the slopes of RSS and
//     of the heap after gc over the second half of the run alone (whether growth levels off);
//   - connections (least and most seen after the warm-up) and table sizes (most seen in the steady
//     part, and after cleanup);
//   - jobs enqueued and finished, dashboard answers by status, supervisor's exit code.
// Not part of the test suite or CI: run it by hand, e.g. `nice -n 10 npm run bench:soak -- --database postgres`.
// PostgreSQL and MariaDB are throwaway servers started here (durability off) unless --admin-url is given.
import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { benchDatabase } from "./databases.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "sqlite" },
    minutes: { type: "string", default: "60" },
    rate: { type: "string", default: "20" },
    sample: { type: "string", default: "15" },
    "admin-url": { type: "string" },
    record: { type: "string" },
    analyse: { type: "string" },
    out: { type: "string" },
  },
});
const dialect = values.database;
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const sampleSeconds = Number(values.sample);
if (!["sqlite", "postgres", "mysql"].includes(dialect)) throw new Error("--database must be sqlite, postgres or mysql");
if (!(minutes > 0) || !(rate > 0) || !(sampleSeconds > 0))
  throw new Error("--minutes, --rate and --sample must be positive");

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, "..", "dist", "cli", "main.js");
const sampler = pathToFileURL(join(here, "soak", "sampler.mjs")).href;
const TABLES = [
  "jobs",
  "ready_executions",
  "claimed_executions",
  "scheduled_executions",
  "blocked_executions",
  "failed_executions",
  "processes",
  "recurring_executions",
  "semaphores",
];
const PAGES = ["/", "/queues/default", "/jobs", "/failed", "/processes", "/recurring", "/concurrency"];
if (values.analyse) {
  const summary = analyseRecord(values.analyse);
  print(summary);
  if (values.out) writeFileSync(values.out, `${JSON.stringify(summary, null, 2)}\n`);
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "firm-queue-soak-"));
const recordDir = values.record ?? work;
mkdirSync(recordDir, { recursive: true });
const samplesFile = join(recordDir, "memory.jsonl");
const databaseFile = join(recordDir, "database.jsonl");
rmSync(samplesFile, { force: true });
rmSync(databaseFile, { force: true });
const database = await benchDatabase(dialect, values["admin-url"]);
const sqlitePath = dialect === "sqlite" ? database.url.slice("sqlite:".length) : null;
process.env.FIRM_QUEUE_DATABASE_URL = database.url;
const { firm, work: workJob } = await import("./soak/jobs.mjs");
const children = [];

try {
  await firm.migrate();
  const db = (await firm.database()).db;
  const env = {
    ...process.env,
    FIRM_QUEUE_SOAK_SAMPLES: samplesFile,
    FIRM_QUEUE_SOAK_SAMPLE_MS: String(sampleSeconds * 1000),
  };
  const supervisor = launch(["start", "--config", join(here, "soak", "soak.config.mjs")], env);
  const dashboard = launch(["dashboard", "--port", "0", "--database-url", database.url], env);
  const dashboardUrl = await printedUrl(dashboard);
  console.log(`soak on ${dialect} (${database.note}): ${minutes} min at ${rate} jobs/s; samples in ${samplesFile}`);

  const counters = { enqueued: 0, enqueueErrors: 0, pages: {} };
  const labels = new Map([
    [supervisor.pid, "supervisor"],
    [dashboard.pid, "dashboard"],
  ]);
  const samples = []; // { t, connections, tables, labels }
  const started = Date.now();
  const end = started + minutes * 60_000;
  const runInfo = { dialect, note: database.note, minutes, rate, sampleSeconds, started };
  writeFileSync(join(recordDir, "run.json"), `${JSON.stringify(runInfo, null, 2)}\n`);

  const enqueuing = repeat(1000, async (tick) => {
    const batch = Array.from({ length: rate }, (_, i) => ({ n: tick * rate + i, failFirst: i % 10 === 0 }));
    try {
      await workJob.enqueueAll(batch, { each: (_args, i) => (i % 10 === 5 ? { wait: "3s" } : {}) });
      counters.enqueued += batch.length;
    } catch (error) {
      counters.enqueueErrors++;
      console.error(`enqueue failed: ${error.message}`);
    }
  });
  const browsing = repeat(2000, async (tick) => {
    const path = PAGES[tick % PAGES.length];
    let status;
    try {
      status = (await fetch(`${dashboardUrl}${path === "/" ? "" : path}`)).status;
    } catch {
      status = "error";
    }
    counters.pages[status] = (counters.pages[status] ?? 0) + 1;
  });
  const sampling = repeat(sampleSeconds * 1000, async () => {
    for (const row of await sql`SELECT pid, kind FROM firm_queue_processes`.execute(db).then((r) => r.rows)) {
      if (Number(row.pid) !== supervisor.pid) labels.set(Number(row.pid), `${row.kind}`.toLowerCase());
    }
    const sample = {
      t: Date.now(),
      connections: await connections(db, [...labels.keys()]),
      tables: await tableSizes(db),
      labels: Object.fromEntries(labels),
    };
    samples.push(sample);
    appendFileSync(databaseFile, `${JSON.stringify(sample)}\n`);
  });

  while (Date.now() < end) {
    await sleep(Math.min(10_000, end - Date.now()));
    const minute = ((Date.now() - started) / 60_000).toFixed(1);
    const last = samples.at(-1);
    if (last)
      console.log(
        `${minute} min: ${counters.enqueued} enqueued; rows: jobs ${last.tables.jobs}, ready ${last.tables.ready_executions}, ` +
          `claimed ${last.tables.claimed_executions}; connections ${last.connections}`,
      );
  }
  enqueuing.stop();
  await enqueuing.done;
  const steadyEnd = Date.now();

  // Drain, then give the dispatcher's own cleanup time to delete what finished (kept 2 min, passes every 30 s).
  const drainDeadline = Date.now() + 120_000;
  while (Date.now() < drainDeadline) {
    const t = await tableSizes(db);
    if (t.ready_executions + t.claimed_executions + t.scheduled_executions === 0) break;
    await sleep(1000);
  }
  console.log("backlog drained; waiting 2.5 min for the dispatcher's cleanup of finished jobs");
  await sleep(150_000);
  const afterCleanup = await tableSizes(db);
  const connectionsAtEnd = await connections(db, [...labels.keys()]);
  browsing.stop();
  sampling.stop();
  await Promise.all([browsing.done, sampling.done]);
  const finished = Number(
    (await sql`SELECT count(*) AS n FROM firm_queue_jobs WHERE finished_at IS NOT NULL`.execute(db)).rows[0].n,
  );

  supervisor.kill("SIGTERM");
  dashboard.kill("SIGTERM");
  const [supervisorExit] = await Promise.all([exitOf(supervisor), exitOf(dashboard)]);
  const afterStop = await tableSizes(db);

  const summary = analyse({
    memory: readSamples(samplesFile),
    labels,
    samples,
    started,
    steadyEnd,
    afterCleanup,
    afterStop,
    connectionsAtEnd,
  });
  summary.run = { ...runInfo, steadyEnd, ...counters, finishedLeft: finished, supervisorExit };
  print(summary);
  if (values.record) writeFileSync(join(recordDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  if (values.out) writeFileSync(values.out, `${JSON.stringify({ ...summary, samples }, null, 2)}\n`);
} finally {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await firm.close();
  await database.cleanup();
  rmSync(work, { recursive: true, force: true });
}

/** The summary of a recorded run (--record dir), computed again from its samples: the whole run's, or what they cover so far. */
function analyseRecord(dir) {
  const ended = existsSync(join(dir, "summary.json"))
    ? JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"))
    : null;
  const run = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
  const samples = readSamples(join(dir, "database.jsonl"));
  const labels = new Map();
  for (const s of samples) for (const [pid, label] of Object.entries(s.labels ?? {})) labels.set(Number(pid), label);
  const memory = readSamples(join(dir, "memory.jsonl"));
  const summary = analyse({
    memory,
    labels,
    samples,
    started: run.started,
    steadyEnd: ended?.run.steadyEnd ?? Math.max(...memory.map((s) => s.t)),
    afterCleanup: ended?.tables.afterCleanup ?? null,
    afterStop: ended?.tables.afterStop ?? null,
    connectionsAtEnd: ended?.connections.atEnd ?? null,
  });
  summary.run = ended ? ended.run : { ...run, cutShort: true };
  return summary;
}

/** A firm-queue CLI process with the memory sampler preloaded and gc exposed (fork-mode children inherit both flags). */
function launch(args, env) {
  const child = spawn(process.execPath, ["--expose-gc", "--import", sampler, cli, ...args], {
    cwd: join(here, "soak"),
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (text) => {
    if (child.stdoutListener) child.stdoutListener(text);
  });
  children.push(child);
  return child;
}

/** The URL `firm-queue dashboard` prints once it listens. */
async function printedUrl(child) {
  let seen = "";
  return new Promise((resolve, reject) => {
    child.stdoutListener = (text) => {
      seen += text;
      const match = /on (http:\/\/\S+)/.exec(seen);
      if (match) resolve(match[1].replace(/\/$/, ""));
    };
    child.once("exit", (code) => reject(new Error(`the dashboard exited (${code}) before listening:\n${seen}`)));
  });
}

function exitOf(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return once(child, "exit").then(([code, signal]) => code ?? signal);
}

/** Runs `task(tick)` every `ms` (never overlapping itself) until stopped. */
function repeat(ms, task) {
  let stopped = false;
  const done = (async () => {
    for (let tick = 0; !stopped; tick++) {
      const next = Date.now() + ms;
      await task(tick);
      if (!stopped) await sleep(Math.max(0, next - Date.now()));
    }
  })();
  return { done, stop: () => (stopped = true) };
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Connections open on the soak's database: the server's count (less this query's own), or for SQLite the handles on the file held by the soak's processes. */
async function connections(db, pids) {
  if (dialect === "postgres") {
    const { rows } =
      await sql`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`.execute(
        db,
      );
    return Number(rows[0].n);
  }
  if (dialect === "mysql") {
    const { rows } =
      await sql`SELECT count(*) AS n FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID()`.execute(
        db,
      );
    return Number(rows[0].n);
  }
  let open = 0;
  for (const pid of [process.pid, ...pids]) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (readlinkSync(`/proc/${pid}/fd/${fd}`) === sqlitePath) open++;
        } catch {
          // closed while we looked
        }
      }
    } catch {
      // the process has exited
    }
  }
  return open;
}

async function tableSizes(db) {
  const sizes = {};
  for (const table of TABLES) {
    const { rows } = await sql`SELECT count(*) AS n FROM ${sql.table(`firm_queue_${table}`)}`.execute(db);
    sizes[table] = Number(rows[0].n);
  }
  return sizes;
}

function readSamples(file) {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Least-squares slope of `y` over `t` (ms), in units of y per hour. */
function slopePerHour(points) {
  if (points.length < 3) return Number.NaN;
  const n = points.length;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.y - my);
    den += (p.t - mt) ** 2;
  }
  return (num / den) * 3_600_000;
}

function analyse({ memory, labels, samples, started, steadyEnd, afterCleanup, afterStop, connectionsAtEnd }) {
  const run = steadyEnd - started;
  const warmUpEnd = started + Math.min(run / 2, Math.max(120_000, 0.1 * run));
  const secondHalf = started + run / 2;
  const mb = (bytes) => bytes / 2 ** 20;
  const byPid = new Map();
  for (const s of memory) {
    if (!byPid.has(s.pid)) byPid.set(s.pid, []);
    byPid.get(s.pid).push(s);
  }
  const processes = [];
  for (const [pid, all] of byPid) {
    const steady = all.filter((s) => s.t >= warmUpEnd && s.t <= steadyEnd);
    const label = labels.get(pid) ?? `pid ${pid}`;
    if (steady.length === 0) {
      processes.push({ process: label, pid, samples: all.length, note: "no samples in the steady part" });
      continue;
    }
    const first = steady[0];
    const last = steady.at(-1);
    const figure = (key) =>
      first[key] === undefined
        ? {}
        : {
            [`${key}Mb`]: [mb(first[key]), mb(last[key])],
            [`${key}SlopeMbPerHour`]: slopePerHour(steady.map((s) => ({ t: s.t, y: mb(s[key]) }))),
            // Over the second half of the run alone: whether growth levels off.
            [`${key}SecondHalfSlopeMbPerHour`]: slopePerHour(
              steady.filter((s) => s.t >= secondHalf).map((s) => ({ t: s.t, y: mb(s[key]) })),
            ),
          };
    processes.push({
      process: label,
      pid,
      samples: steady.length,
      ...figure("rss"),
      ...figure("heapUsed"),
      ...figure("gcRss"),
      ...figure("gcHeapUsed"),
    });
  }
  const steadySamples = samples.filter((s) => s.t >= warmUpEnd && s.t <= steadyEnd);
  const largest = {};
  for (const table of TABLES) largest[table] = Math.max(0, ...steadySamples.map((s) => s.tables[table]));
  const counts = steadySamples.map((s) => s.connections);
  return {
    steadyMinutes: (steadyEnd - warmUpEnd) / 60_000,
    processes,
    connections: { least: Math.min(...counts), most: Math.max(...counts), atEnd: connectionsAtEnd },
    tables: { largestWhileRunning: largest, afterCleanup, afterStop },
    totalMinutes: run / 60_000,
    jobsTableSlopePerHour: slopePerHour(steadySamples.map((s) => ({ t: s.t, y: s.tables.jobs }))),
  };
}

function print(summary) {
  const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : "-");
  const r = summary.run;
  if (r.cutShort)
    console.log(
      `\nsoak, ${r.dialect}, so far: ${f(summary.totalMinutes)} of ${r.minutes} min at ${r.rate} jobs/s (${r.note})`,
    );
  else
    console.log(
      `\nsoak, ${r.dialect}: ${r.minutes} min at ${r.rate} jobs/s (${r.note}); ${r.enqueued} enqueued, ` +
        `${r.enqueueErrors} enqueue errors; dashboard answers ${JSON.stringify(r.pages)}; supervisor exit ${r.supervisorExit}`,
    );
  console.log(`memory over the steady ${f(summary.steadyMinutes)} min (first and last sample, slope per hour):`);
  console.log(
    "process | samples | RSS MB | RSS MB/h | heap used MB | heap MB/h | after gc: RSS MB | MB/h | heap MB | MB/h " +
      "| second half: RSS MB/h | heap after gc MB/h",
  );
  const cells = (p, key) =>
    p[`${key}Mb`] ? `${f(p[`${key}Mb`][0])} → ${f(p[`${key}Mb`][1])} | ${f(p[`${key}SlopeMbPerHour`])}` : "- | -";
  for (const p of summary.processes) {
    if (p.note) console.log(`${p.process} | ${p.samples} | ${p.note}`);
    else
      console.log(
        `${p.process} | ${p.samples} | ${cells(p, "rss")} | ${cells(p, "heapUsed")} | ${cells(p, "gcRss")} | ${cells(p, "gcHeapUsed")} ` +
          `| ${f(p.rssSecondHalfSlopeMbPerHour)} | ${f(p.gcHeapUsedSecondHalfSlopeMbPerHour)}`,
      );
  }
  const c = summary.connections;
  console.log(`connections: ${c.least} to ${c.most} after the warm-up, ${c.atEnd ?? "-"} after cleanup`);
  console.log("table | most rows while running | after cleanup | after stop");
  for (const table of TABLES)
    console.log(
      `${table} | ${summary.tables.largestWhileRunning[table]} | ${summary.tables.afterCleanup?.[table] ?? "-"} | ${summary.tables.afterStop?.[table] ?? "-"}`,
    );
  console.log(`jobs table slope while running: ${f(summary.jobsTableSlopePerHour)} rows/h`);
}
