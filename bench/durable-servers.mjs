// Throwaway durable servers for the benches that compare runs on every database: PostgreSQL
// (fsync, synchronous_commit, full_page_writes on) and MariaDB (innodb_flush_log_at_trx_commit=1,
// doublewrite on) started once per script and shared by its runs, each run on a fresh database;
// SQLite on a fresh file (WAL, synchronous=NORMAL). `--url`/`--mysql-url` use servers of your own.
import { cpus, loadavg } from "node:os";
import { startMariadb } from "../scripts/servers/mariadb.mjs";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { benchDatabase } from "./databases.mjs";

/** The servers a script needs, started lazily; `fresh(dialect)` makes a new database on one. */
export class DurableServers {
  /** @param {{ postgresUrl?: string, mysqlUrl?: string }} [urls] */
  constructor(urls = {}) {
    this.urls = { postgres: urls.postgresUrl, mysql: urls.mysqlUrl };
    /** @type {Record<string, { url: string, stop: () => Promise<void> }>} */
    this.started = {};
  }

  /**
   * A fresh database on `dialect`'s server.
   * @param {"sqlite" | "postgres" | "mysql"} dialect
   * @returns {Promise<{ url: string, cleanup: () => Promise<void> }>}
   */
  async fresh(dialect) {
    if (dialect === "sqlite") return benchDatabase("sqlite");
    let url = this.urls[dialect];
    if (!url) {
      this.started[dialect] ??=
        dialect === "postgres" ? await startPostgres({ durable: true }) : await startMariadb({ durable: true });
      url = this.started[dialect].url;
    }
    return benchDatabase(dialect, url);
  }

  async stop() {
    for (const server of Object.values(this.started)) await server.stop();
  }
}

/** One line saying where the figures come from: databases' durability, node, CPUs, load. */
export function machineNote() {
  return `durable PostgreSQL and MariaDB (their default commit settings), SQLite WAL synchronous=NORMAL; node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0].toFixed(2)}`;
}

/** The load average now, for each run's line (the machine may be shared). */
export function load() {
  return Number(loadavg()[0].toFixed(2));
}
