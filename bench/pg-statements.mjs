// pg_stat_statements on a bench's throwaway PostgreSQL: how to load it and what a run cost.

/** Server settings that load pg_stat_statements with planning time tracked. */
export const STATEMENT_STATISTICS = {
  shared_preload_libraries: "pg_stat_statements",
  "pg_stat_statements.track_utility": "off",
  "pg_stat_statements.track_planning": "on",
};

/** Start counting from zero (the extension created in this database if need be). */
export async function resetStatementStatistics(client) {
  await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  await client.query("SELECT pg_stat_statements_reset()");
}

/**
 * Print the costliest statements of the client's database, per 1,000 of `jobs`: execution and
 * planning time, calls, rows and WAL bytes per job.
 * @param {import("pg").Client} client
 * @param {number} jobs
 * @param {{ limit?: number }} [options]
 */
export async function printCostliestStatements(client, jobs, { limit = 8 } = {}) {
  const { rows } = await client.query(
    `SELECT calls, rows, total_exec_time AS ms, total_plan_time AS plan_ms, wal_bytes, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query
     FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
     ORDER BY total_exec_time DESC LIMIT $1`,
    [limit],
  );
  const per1000 = (value) => ((Number(value) * 1000) / jobs).toFixed(1);
  for (const row of rows)
    console.log(
      `  ${per1000(row.ms).padStart(6)} ms/1000 jobs (+${per1000(row.plan_ms)} planning)  ${String(row.calls).padStart(6)} calls  ${String(row.rows).padStart(7)} rows  ${String(Math.round(Number(row.wal_bytes) / jobs)).padStart(5)} WAL B/job  ${row.query}`,
    );
}
