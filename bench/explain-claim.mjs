// npm run build && node bench/explain-claim.mjs [--retained 1000000] [--backlog 20000] [--run 2000]
//                                               [--concurrency 24] [--durable] [--url URL] [--no-analyze]
//
// The query plans of firm-queue's worker on PostgreSQL with a large table, to check that the
// claim path uses its indexes and scans no table sequentially. firm-queue's jobs table is filled
// with --retained finished jobs and --backlog ready ones; a worker runs --run of them while every
// statement it sends is recorded; then each distinct statement is EXPLAINed with the parameters it
// was first sent with, after an ANALYZE (what autovacuum would have done by then). The plans are
// those of the statements as firm-queue sends them today, whatever its claim query has become.
// Prints each plan and then the statements whose plans hold a sequential scan; exit code 0 either way.
import pg from "pg";
import { parseArgs } from "node:util";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { benchDatabase } from "./databases.mjs";
import { sleep } from "./peers/clock.mjs";
import { fillRetainedJobs } from "./peers/retained.mjs";
import { captureStatements } from "./explain/capture.mjs";

const { values } = parseArgs({
  options: {
    retained: { type: "string", default: "1000000" },
    backlog: { type: "string", default: "20000" },
    run: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "24" },
    durable: { type: "boolean", default: false },
    url: { type: "string" },
    "no-analyze": { type: "boolean", default: false },
  },
});
const retained = count("retained", 0);
const backlog = count("backlog", 1);
const run = count("run", 1);
const concurrency = count("concurrency", 1);
if (run > backlog) fail(`--run (${run}) cannot exceed --backlog (${backlog})`);

const QUEUE = "bench";
const { FirmQueue, silentLogger } = await import("firm-queue").catch((error) =>
  fail(`firm-queue cannot be loaded (${String(error)}); run \`npm run build\` first`),
);

/** Clean-ups, newest last; run once on success, failure or Ctrl-C. */
const cleanups = /** @type {(() => Promise<unknown>)[]} */ ([]);
let cleaning = /** @type {Promise<void> | undefined} */ (undefined);
const cleanUp = () =>
  (cleaning ??= (async () => {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((error) => progress(`clean-up failed: ${String(error)}`));
  })());
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"]))
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

try {
  let adminUrl = values.url;
  if (!adminUrl) {
    progress(`starting a throwaway PostgreSQL server (${values.durable ? "durable" : "relaxed"})…`);
    const server = await startPostgres({ durable: values.durable });
    cleanups.push(() => server.stop());
    adminUrl = server.url;
  }
  const database = await benchDatabase("postgres", adminUrl);
  cleanups.push(() => database.cleanup());
  const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
  cleanups.push(() => firm.close());
  await firm.migrate();
  if (retained > 0) {
    progress(`${retained} finished jobs into the jobs table…`);
    await fillRetainedJobs("postgres", database.url, retained, { queue: QUEUE, jobName: QUEUE });
  }
  let started = 0;
  const job = firm.defineJob(QUEUE, () => void started++, { queue: QUEUE });
  progress(`${backlog} ready jobs…`);
  for (let from = 0; from < backlog; from += 1000)
    await job.enqueueAll(Array.from({ length: Math.min(1000, backlog - from) }, (_, k) => ({ i: from + k })));

  progress(`running ${run} of them with concurrency ${concurrency}, recording every statement…`);
  const statements = await captureStatements(async () => {
    const supervisor = await firm.start({
      workers: [{ queues: "*", concurrency, pollingInterval: 10 }],
      dispatchers: [],
    });
    try {
      const deadline = Date.now() + 120_000;
      while (started < run && Date.now() < deadline) await sleep(5);
    } finally {
      await supervisor.stop();
    }
  });
  if (started < run) progress(`only ${started} jobs started within 120 s; explaining what was recorded`);

  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  cleanups.push(() => client.end());
  if (!values["no-analyze"]) await client.query("ANALYZE");
  const { rows } = await client.query(
    "SELECT (SELECT count(*) FROM firm_queue_jobs)::int AS jobs, (SELECT count(*) FROM firm_queue_ready_executions)::int AS ready",
  );
  console.log(
    `firm-queue's worker statements on PostgreSQL, explained with ${rows[0].jobs} rows in firm_queue_jobs and ${rows[0].ready} in firm_queue_ready_executions (${retained} retained finished jobs, ${backlog}-job backlog of which ${started} ran, concurrency ${concurrency}${values["no-analyze"] ? ", no ANALYZE" : ", after ANALYZE"}):\n`,
  );
  const { rows: sizes } = await client.query(
    "SELECT relname, GREATEST(reltuples, 0)::bigint AS rows FROM pg_class WHERE relkind = 'r' AND relname LIKE 'firm\\_queue\\_%'",
  );
  const rowsOf = new Map(sizes.map((size) => [size.relname, Number(size.rows)]));
  const withSeqScan = [];
  for (const statement of statements) {
    const { rows: plan } = await client.query(`EXPLAIN ${statement.text}`, statement.values);
    const lines = plan.map((row) => row["QUERY PLAN"]);
    const seqScans = lines
      .map((line) => /Seq Scan on (\w+)/.exec(line)?.[1])
      .filter((table) => table !== undefined)
      .map((table) => `${table} (${rowsOf.get(table) ?? "?"} rows)`);
    if (seqScans.length > 0) withSeqScan.push({ statement, seqScans });
    console.log(
      `-- sent ${statement.count} time(s):\n${abbreviated(statement.text, 400)}\n${lines.map((line) => `   ${line}`).join("\n")}\n`,
    );
  }
  if (withSeqScan.length === 0) console.log(`No sequential scan in the plans of the ${statements.length} statements.`);
  else {
    // A sequential scan of a table of a few rows is the planner's right choice; one of a table
    // that grows with the backlog or the history is what this script is for.
    console.log(
      `Sequential scans in ${withSeqScan.length} of the ${statements.length} statements (row counts after the run):`,
    );
    for (const { statement, seqScans } of withSeqScan)
      console.log(`- ${seqScans.join(", ")} in: ${abbreviated(statement.text, 160)}`);
  }
} catch (error) {
  progress(`FAILED: ${/** @type {Error} */ (error)?.stack ?? String(error)}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}

/** @param {string} text @param {number} length */
function abbreviated(text, length) {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}

/** @param {string} name @param {number} min */
function count(name, min) {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < min)
    fail(`--${name} must be an integer of at least ${min}, got ${JSON.stringify(values[name])}`);
  return value;
}

function progress(message) {
  process.stderr.write(`${message}\n`);
}

/** @returns {never} */
function fail(message) {
  process.stderr.write(`explain-claim: ${message}\n`);
  process.exit(1);
}
