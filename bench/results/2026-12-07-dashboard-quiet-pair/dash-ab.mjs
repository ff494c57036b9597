// Quiet A/B of the dashboard pages at 1M jobs: base build (pre-018 schema) on a fill, main on a migrated copy.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import pg from "pg";
import { startPostgres } from "../scripts/servers/postgres.mjs";
const out = process.argv[2];
const rounds = process.argv[3] ?? "31";
const server = await startPostgres({ durable: true });
try {
  const t0 = Date.now();
  const fillOut = execFileSync("node", ["/tmp/dash-base/bench/dashboard.mjs", "--url", server.url, "--keep", "--rounds", "1"], { encoding: "utf8", maxBuffer: 1 << 26 });
  const a = /kept: (\S+)/.exec(fillOut)[1];
  console.log("filled", a, Math.round((Date.now() - t0) / 1000), "s");
  const b = a.replace(/\/[^/]+$/, "/dash_branch");
  const admin = new pg.Client({ connectionString: server.url }); await admin.connect();
  await admin.query(`CREATE DATABASE dash_branch TEMPLATE ${a.split("/").pop()}`); await admin.end();
  const { FirmQueue, silentLogger } = await import("/work/main/dist/index.js");
  const firm = new FirmQueue({ databaseUrl: b, logger: silentLogger }); await firm.migrate(); await firm.close();
  for (const url of [a, b]) { const c = new pg.Client({ connectionString: url }); await c.connect(); await c.query("VACUUM ANALYZE"); await c.end(); }
  console.log("copied and migrated", Math.round((Date.now() - t0) / 1000), "s");
  const ab = execFileSync("node", ["/work/main/bench/results/2026-12-07-finished-at-indexes/ab-pages.mjs", "--a-lib", "/tmp/dash-base/dist/index.js", "--a-url", a, "--b-lib", "/work/main/dist/index.js", "--b-url", b, "--rounds", rounds, "--full"], { encoding: "utf8", maxBuffer: 1 << 26 });
  let explain = "";
  for (const [label, url] of [["base (pre-018)", a], ["main", b]]) {
    const c = new pg.Client({ connectionString: url }); await c.connect();
    for (const q of [
      `SELECT id FROM firm_queue_jobs WHERE finished_at IS NULL AND cancelled_at IS NULL AND id > 0 AND class_name = 'Job7' ORDER BY id LIMIT 1000`,
      `SELECT id FROM firm_queue_jobs WHERE finished_at IS NULL AND cancelled_at IS NULL AND id > 0 AND queue_name = 'queue_7' ORDER BY id LIMIT 1000`,
    ]) {
      const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${q}`);
      explain += `\n-- ${label}: ${q}\n${rows.map((r) => r["QUERY PLAN"]).join("\n")}\n`;
    }
    await c.end();
  }
  writeFileSync(out, ab + "\n## cancelAll's page query (unendedJobIds), EXPLAIN ANALYZE\n" + explain);
  console.log(ab, explain);
} finally { await server.stop(); }
