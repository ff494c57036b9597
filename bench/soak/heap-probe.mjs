// npm run bench:soak-probe -- --database sqlite|postgres|mysql [--jobs 20000] [--rounds 3] [--snapshots dir]
//                              [--admin-url url]
// (node --expose-gc bench/soak/heap-probe.mjs …; the retries' warnings go to stderr: add 2>/dev/null)
//
// A quick leak hunt for the soak's processes, in one process: the soak's deployment
// (soak.config.mjs: two workers at concurrency 4, a dispatcher clearing finished jobs, a scheduler
// with a task every 5 s) started in async mode, plus the dashboard server and a client fetching its
// pages, driven as fast as they go rather than at the soak's steady rate. After a warm-up round and
// after each further round of `jobs` jobs (10 % fail their first attempt and are retried, 10 % are
// scheduled a second ahead) it waits for the backlog to drain, forces collections and prints the
// live heap; with --snapshots it also writes a heap snapshot per round and prints the constructors
// whose object counts changed between the first round after the warm-up and the last, and how much
// of those two snapshots is V8's code space (which grows as V8 optimises more paths) and how much
// the rest. A leak keyed by job shows as a count that grows by about the jobs per round; a flat
// heap after the warm-up shows there is none.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { writeHeapSnapshot } from "node:v8";
import { sql } from "kysely";
import { benchDatabase } from "../databases.mjs";

const { values } = parseArgs({
  options: {
    database: { type: "string", default: "sqlite" },
    jobs: { type: "string", default: "20000" },
    rounds: { type: "string", default: "3" },
    snapshots: { type: "string" },
    "admin-url": { type: "string" },
  },
});
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const jobsPerRound = Number(values.jobs);
const database = await benchDatabase(values.database, values["admin-url"]);
process.env.FIRM_QUEUE_DATABASE_URL = database.url;
const { firm, work } = await import("./jobs.mjs");
const config = (await import("./soak.config.mjs")).default;
const { startDashboardServer } = await import("../../dist/index.js");

const PAGES = ["/", "/queues/default", "/jobs", "/failed", "/processes", "/recurring", "/concurrency"];
let n = 0;
let pages = 0;
let pageErrors = 0;
try {
  await firm.migrate();
  const { jobs: _modules, ...options } = config;
  const supervisor = await firm.start({ ...options, mode: "async" });
  const dashboard = await startDashboardServer({ firm, port: 0, host: "127.0.0.1" });
  let browsing = true;
  const browser = (async () => {
    for (let i = 0; browsing; i++) {
      try {
        const response = await fetch(`${dashboard.url.replace(/\/$/, "")}${PAGES[i % PAGES.length]}`);
        await response.text();
        pages++;
      } catch {
        // A kept-alive socket the server closed while a snapshot or a forced collection held this
        // process: counted, and the next request opens a new one.
        pageErrors++;
      }
    }
  })();
  const snapshots = [];
  for (let round = 0; round <= Number(values.rounds); round++) {
    const count = round === 0 ? Math.min(5000, jobsPerRound) : jobsPerRound;
    const started = Date.now();
    for (let sent = 0; sent < count; sent += 200) {
      const batch = Array.from({ length: 200 }, (_, i) => ({ n: n++, failFirst: i % 10 === 0 }));
      await work.enqueueAll(batch, { each: (_args, i) => (i % 10 === 5 ? { wait: "1s" } : {}) });
      // Keep the backlog short so that memory reflects the steady state, not a queue of pending rows.
      await backlogBelow(2000);
    }
    await backlogBelow(1);
    const seconds = (Date.now() - started) / 1000;
    for (let i = 0; i < 4; i++) {
      globalThis.gc();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { heapUsed, rss } = process.memoryUsage();
    console.log(
      `round ${round}: ${count} jobs in ${seconds.toFixed(0)} s, ${pages} pages so far (${pageErrors} failed); after gc heap used ` +
        `${(heapUsed / 2 ** 20).toFixed(2)} MB, rss ${(rss / 2 ** 20).toFixed(1)} MB`,
    );
    if (values.snapshots) {
      mkdirSync(values.snapshots, { recursive: true });
      snapshots.push(writeHeapSnapshot(join(values.snapshots, `round-${round}.heapsnapshot`)));
    }
  }
  browsing = false;
  await browser;
  await dashboard.close();
  await supervisor.stop();
  if (snapshots.length >= 2) compare(snapshots[1], snapshots.at(-1));
} finally {
  await firm.close();
  await database.cleanup();
}

async function backlogBelow(limit) {
  const db = (await firm.database()).db;
  for (;;) {
    const { rows } = await sql`SELECT count(*) AS n FROM firm_queue_jobs WHERE finished_at IS NULL`.execute(db);
    if (Number(rows[0].n) < limit) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Prints the constructors (and node types) whose live object counts grew most between two snapshots. */
function compare(before, after) {
  const a = countsOf(before);
  const b = countsOf(after);
  const rows = [];
  for (const [key, [count, size]] of b) {
    const [c0, s0] = a.get(key) ?? [0, 0];
    if (count !== c0) rows.push({ key, before: c0, after: count, grew: count - c0, bytes: size - s0 });
  }
  rows.sort((x, y) => Math.abs(y.bytes) - Math.abs(x.bytes));
  // V8's code space (bytecode, compiled code, feedback) grows as V8 optimises more paths: apart.
  for (const [file, counts] of [
    [before, a],
    [after, b],
  ]) {
    let total = 0;
    let code = 0;
    for (const [key, [, size]] of counts) {
      total += size;
      if (key.startsWith("code:")) code += size;
    }
    const mb = (bytes) => (bytes / 2 ** 20).toFixed(3);
    console.log(`${file}: ${mb(total)} MB live, ${mb(code)} MB of it V8's code, ${mb(total - code)} MB the rest`);
  }
  console.log(`\nlargest changes in live objects, ${before} → ${after} (count, self bytes):`);
  for (const r of rows.slice(0, 40)) console.log(`${r.key} | ${r.before} → ${r.after} (${r.grew}) | ${r.bytes}`);
}

function countsOf(file) {
  const snapshot = JSON.parse(readFileSync(file, "utf8"));
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const counts = new Map();
  const nodes = snapshot.nodes;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]];
    const name =
      type === "object" || type === "closure" || type === "native" ? snapshot.strings[nodes[i + nameAt]] : "";
    const key = `${type}:${name}`;
    const entry = counts.get(key) ?? [0, 0];
    entry[0]++;
    entry[1] += nodes[i + sizeAt];
    counts.set(key, entry);
  }
  return counts;
}
