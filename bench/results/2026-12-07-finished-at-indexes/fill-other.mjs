// node fill-other.mjs --lib dist/index.js --url sqlite:… | mysql://… : migrate with --lib and fill 1M jobs
// (950,000 finished over the last 24 h, 50,000 ready, 20,000 of the finished ids also failed-for-good copies are not made).
import { parseArgs } from "node:util";
import { sql } from "kysely";
const { values } = parseArgs({ options: { url: { type: "string" }, lib: { type: "string" }, jobs: { type: "string", default: "1000000" } } });
const { FirmQueue, silentLogger } = await import(values.lib);
const firm = new FirmQueue({ databaseUrl: values.url, logger: silentLogger });
await firm.migrate();
const { db } = await firm.database();
const N = Number(values.jobs), READY = 50000, FAILED = 20000, F = N - READY - FAILED;
const t = Date.now();
if (values.url.startsWith("sqlite")) {
  const ts = (expr) => `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 day', '+' || (${expr}) || ' seconds')`;
  await sql.raw(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${N})
    INSERT INTO firm_queue_jobs (id, queue_name, class_name, arguments, priority, attempts, scheduled_at, finished_at, created_at, updated_at)
    SELECT i, 'queue_' || (i % 10), 'Job' || (i % 20), '{"order":' || i || '}', 0, CASE WHEN i <= ${F} THEN 1 ELSE 0 END,
      ${ts(`i * 86400.0 / ${N}`)}, CASE WHEN i <= ${F} THEN ${ts(`i * 86400.0 / ${F}`)} END, ${ts(`i * 86400.0 / ${N}`)}, ${ts("0")} FROM s`).execute(db);
} else {
  const ts = (expr) => `UTC_TIMESTAMP(6) - INTERVAL 1 DAY + INTERVAL (${expr}) MICROSECOND`;
  await sql.raw(`INSERT INTO firm_queue_jobs (id, queue_name, class_name, arguments, priority, attempts, scheduled_at, finished_at, created_at, updated_at)
    SELECT seq, CONCAT('queue_', seq % 10), CONCAT('Job', seq % 20), CONCAT('{"order":', seq, '}'), 0, IF(seq <= ${F}, 1, 0),
      ${ts(`seq * 86400000000 DIV ${N}`)}, IF(seq <= ${F}, ${ts(`seq * 86400000000 DIV ${F}`)}, NULL), ${ts(`seq * 86400000000 DIV ${N}`)}, UTC_TIMESTAMP(6)
    FROM seq_1_to_${N}`).execute(db);
}
await sql.raw(`INSERT INTO firm_queue_failed_executions (job_id, error, created_at) SELECT id, '{"name":"TypeError","message":"bench failure"}', created_at FROM firm_queue_jobs WHERE id > ${F} AND id <= ${F + FAILED}`).execute(db);
await sql.raw(`INSERT INTO firm_queue_ready_executions (job_id, queue_name, priority, created_at) SELECT id, queue_name, 0, created_at FROM firm_queue_jobs WHERE id > ${F + FAILED}`).execute(db);
await sql.raw(values.url.startsWith("sqlite") ? "ANALYZE" : "ANALYZE TABLE firm_queue_jobs").execute(db);
console.log(`filled ${N} jobs in ${((Date.now() - t) / 1000).toFixed(0)} s`);
await firm.close();
