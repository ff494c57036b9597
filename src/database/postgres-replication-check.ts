import { sql } from "kysely";
import type { ClusterWarning } from "./adapter.js";
import type { Db } from "./dialect.js";

/** synchronous_commit values that do not wait for a synchronous standby. */
const LOCAL_COMMITS = new Set(["off", "local"]);

/**
 * A primary with standbys keeps firm-queue's promises through a failover only when every commit
 * of firm-queue's waits for a standby: `synchronous_standby_names` names one and
 * `synchronous_commit` (as firm-queue's own session sees it: server, role, database or URL) is not
 * `local` or `off`. Read on the primary; a server without standbys gets no warning.
 */
export async function postgresClusterWarnings(db: Db): Promise<ClusterWarning[]> {
  const { rows } = await sql<{ names: string; commit: string; standbys: number }>`
    SELECT current_setting('synchronous_standby_names') AS names,
           current_setting('synchronous_commit') AS commit,
           (SELECT count(*) FROM pg_stat_replication)::int AS standbys`.execute(db);
  const row = rows[0];
  if (!row || row.standbys === 0) return [];
  const lost =
    "a failover to a standby can lose jobs enqueued and finishes recorded in its last moments (a lost finish runs its job again)";
  if (row.names.trim() === "")
    return [
      {
        setting: "synchronous_standby_names",
        message: `empty: replication to the ${row.standbys} standby(s) is asynchronous, so ${lost}; name the standby there (docs/high-availability.md)`,
      },
    ];
  if (LOCAL_COMMITS.has(row.commit))
    return [
      {
        setting: "synchronous_commit",
        message: `${row.commit} in firm-queue's sessions: its commits do not wait for the synchronous standby, so ${lost}; use on, remote_write or remote_apply (docs/high-availability.md)`,
      },
    ];
  return [];
}
