import { sql } from "kysely";
import type { ClusterWarning } from "./adapter.js";
import type { Db } from "./dialect.js";

/** wsrep_sync_wait's bit for reads (SELECT, SHOW, BEGIN). */
const READS = 1;

/**
 * On a Galera cluster, writes that conflict across nodes are certified (the loser gets a deadlock
 * error and firm-queue retries it), but reads are not: without `wsrep_sync_wait` a node answers from
 * what it has applied so far. Where a decision rests on a read alone, it can miss what another node
 * just committed: rate limits count recent starts, and a job read right after it was enqueued or
 * finished on another node (`getJob`, `waitFor`, `firm.inspect`) may not be there yet. Read on
 * firm-queue's own session; a server without wsrep, or a one-node cluster, gets no warning.
 */
export async function galeraClusterWarnings(db: Db): Promise<ClusterWarning[]> {
  const { rows } = await sql<{ Variable_name: string; Value: string }>`
    SHOW VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_sync_wait')`.execute(db);
  const value = (name: string) => rows.find((row) => row.Variable_name === name)?.Value;
  if (value("wsrep_on") !== "ON") return [];
  const status = await sql<{ Variable_name: string; Value: string }>`
    SHOW STATUS WHERE Variable_name = 'wsrep_cluster_size'`.execute(db);
  if (Number(status.rows[0]?.Value ?? 1) <= 1) return [];
  const syncWait = Number(value("wsrep_sync_wait") ?? 0);
  if ((syncWait & READS) !== 0) return [];
  return [
    {
      setting: "wsrep_sync_wait",
      message: `${syncWait} (reads do not wait for the cluster): a node may not see what another just committed, so rate limits can be exceeded across nodes and getJob, waitFor and firm.inspect can read stale jobs; set wsrep_sync_wait=1 (docs/high-availability.md)`,
    },
  ];
}
