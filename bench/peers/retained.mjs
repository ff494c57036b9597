// Finished jobs put straight into firm-queue's jobs table before a run (--retained N), so the run
// measures a table that has kept the history of N earlier jobs, as `preserveFinishedJobs` (the
// default) does. One INSERT … SELECT per database, generating the rows in the server (a million
// rows take seconds this way, against minutes through the API). The rows look like jobs of the
// benchmark's queue that ran and finished, one per millisecond before now.

/**
 * @param {"postgres" | "mysql" | "sqlite"} dialect
 * @param {string} url firm-queue's database URL (its schema migrated)
 * @param {number} count
 * @param {{ queue: string, jobName: string }} as which queue and job the rows belong to
 */
export async function fillRetainedJobs(dialect, url, count, { queue, jobName }) {
  if (!Number.isInteger(count) || count <= 0)
    throw new Error(`retained job count must be a positive integer, got ${count}`);
  if (dialect === "postgres") return fillPostgres(url, count, queue, jobName);
  if (dialect === "mysql") return fillMariadb(url, count, queue, jobName);
  return fillSqlite(url, count, queue, jobName);
}

const COLUMNS = "queue_name, class_name, arguments, priority, attempts, created_at, updated_at, finished_at";

/** @param {string} url @param {number} count @param {string} queue @param {string} jobName */
async function fillPostgres(url, count, queue, jobName) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO firm_queue_jobs (${COLUMNS})
       SELECT $1, $2, '{"i":' || n || '}', 0, 1, t, t, t
       FROM (SELECT n, now() - ($3::int - n) * interval '1 millisecond' AS t FROM generate_series(1, $3::int) AS n) AS g`,
      [queue, jobName, count],
    );
    // What autovacuum would have done by the time a table holds this much history: planner
    // statistics and a visibility map, so plans are those of a table in use, not of a fresh one.
    await client.query("VACUUM ANALYZE firm_queue_jobs");
  } finally {
    await client.end();
  }
}

/** @param {string} url @param {number} count @param {string} queue @param {string} jobName */
async function fillMariadb(url, count, queue, jobName) {
  const { default: mysql } = await import("mysql2/promise");
  const connection = await mysql.createConnection(url);
  try {
    // A recursive CTE stops at max_recursive_iterations; let it reach `count`.
    await connection.query("SET SESSION max_recursive_iterations = ?", [count + 1]);
    await connection.query(
      `INSERT INTO firm_queue_jobs (${COLUMNS})
       WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
       SELECT ?, ?, CONCAT('{"i":', n, '}'), 0, 1, t, t, t
       FROM (SELECT n, UTC_TIMESTAMP(6) - INTERVAL (? - n) * 1000 MICROSECOND AS t FROM g) AS x`,
      [count, queue, jobName, count],
    );
    // InnoDB recomputes statistics itself after this many changed rows; do it now, as above.
    await connection.query("ANALYZE TABLE firm_queue_jobs");
  } finally {
    await connection.end();
  }
}

/** @param {string} url @param {number} count @param {string} queue @param {string} jobName */
async function fillSqlite(url, count, queue, jobName) {
  const { default: Database } = await import("better-sqlite3");
  // firm-queue's URL forms: sqlite:path, sqlite://path.
  const filename = url.replace(/^sqlite3?:(\/\/)?/, "");
  const db = new Database(filename);
  try {
    db.pragma("busy_timeout = 10000");
    // Timestamps as firm-queue writes them on SQLite: ISO 8601 text in UTC, with milliseconds.
    // No ANALYZE: SQLite never gathers statistics on its own, so a user's database has none.
    db.prepare(
      `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
       INSERT INTO firm_queue_jobs (${COLUMNS})
       SELECT ?, ?, '{"i":' || n || '}', 0, 1, t, t, t
       FROM (SELECT n, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', printf('-%.3f seconds', (? - n) / 1000.0)) AS t FROM g)`,
    ).run(count, queue, jobName, count);
  } finally {
    db.close();
  }
}
