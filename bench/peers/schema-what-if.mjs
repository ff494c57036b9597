// A what-if for firm-queue's PostgreSQL schema, measured beside the real one in `bench:peers`
// (system `firm-queue-postgres-what-if-lean`, run only when named with --systems). It is not a
// setting firm-queue offers: it shows, in the same run as the other queues, what two schema
// decisions left open would be worth (docs/benchmarks.md, "Hot path, seventh pass"):
//   - the jobs table without its three `finished_at` indexes (which serve the finished-job lists,
//     the throughput chart and the cleanup), with room in each page for in-place updates;
//   - claims without their foreign key to the jobs table.

/** The statements run once the schema is migrated. */
export const LEAN_SCHEMA_WHAT_IF = [
  "DROP INDEX index_firm_queue_jobs_on_finished_at",
  "DROP INDEX index_firm_queue_jobs_for_filtering",
  "DROP INDEX index_firm_queue_jobs_for_alerting",
  "ALTER TABLE firm_queue_jobs SET (fillfactor = 70)",
  "ALTER TABLE firm_queue_claimed_executions DROP CONSTRAINT firm_queue_claimed_executions_job_id_fkey",
];

/** @param {string} url a migrated firm-queue database on PostgreSQL @param {readonly string[]} statements */
export async function applySchemaWhatIf(url, statements) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}
