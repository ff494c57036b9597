// Where a database server's durable log stands (PostgreSQL's WAL, InnoDB's redo log), for the
// log bytes a run wrote per job.

/**
 * A reader of the log position (bytes since the log began) of the server `url` names, on a
 * connection of its own opened now, or undefined for a database without one (SQLite). The
 * position is the whole server's: every database's writes, and on PostgreSQL checkpoints'
 * full-page images, which is what a durable run costs the server.
 * @param {string} url
 * @returns {Promise<{ bytes: () => Promise<number>, close: () => Promise<void> } | undefined>}
 */
export async function logPositionReader(url) {
  if (/^postgres(ql)?:/.test(url)) {
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return {
      bytes: async () => {
        const { rows } = await client.query("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::text AS bytes");
        return Number(rows[0].bytes);
      },
      close: () => client.end(),
    };
  }
  if (/^(mysql|mariadb):/.test(url)) {
    const { default: mysql } = await import("mysql2/promise");
    const connection = await mysql.createConnection(url.replace(/^mariadb:/, "mysql:"));
    return {
      bytes: async () => {
        const [rows] = await connection.query("SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'");
        return Number(/** @type {any[]} */ (rows)[0]?.Value ?? Number.NaN);
      },
      close: () => connection.end(),
    };
  }
  return undefined;
}
