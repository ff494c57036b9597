import { sql } from "kysely";
import type { Db } from "./dialect.js";
import { NOT_A_REPLICA, type ReplicaState } from "./replica-state.js";

type StatusRow = Record<string, unknown>;

/**
 * A MariaDB/MySQL server's lag, read on it. A replica reports `Seconds_Behind_Master`
 * (`Seconds_Behind_Source` on MySQL 8): whole seconds, NULL when a replication thread is stopped
 * (then it is not following). A Galera node has no lag in time: it is Synced or not, with write
 * sets waiting to be applied (`wsrep_local_recv_queue`); reads there see them only with
 * `wsrep_sync_wait`. Anything else replicates from no one.
 */
export async function mysqlReplicaState(db: Db): Promise<ReplicaState> {
  const replica = await replicationStatus(db);
  if (replica) {
    const seconds = replica.Seconds_Behind_Master ?? replica.Seconds_Behind_Source;
    const io = replica.Slave_IO_Running ?? replica.Replica_IO_Running;
    const applier = replica.Slave_SQL_Running ?? replica.Replica_SQL_Running;
    const following = io === "Yes" && applier === "Yes" && seconds !== null && seconds !== undefined;
    return {
      role: "replica",
      following,
      lagMs: following ? Number(seconds) * 1000 : null,
      detail: following
        ? `Seconds_Behind_Master=${String(seconds)}`
        : `replication stopped (IO thread ${String(io)}, SQL thread ${String(applier)})`,
    };
  }
  const { rows } = await sql<{ Variable_name: string; Value: string }>`
    SHOW STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state_comment', 'wsrep_local_recv_queue')`.execute(
    db,
  );
  const value = (name: string) => rows.find((row) => row.Variable_name === name)?.Value;
  const state = value("wsrep_local_state_comment");
  if (state === undefined) return NOT_A_REPLICA;
  const pending = Number(value("wsrep_local_recv_queue") ?? 0);
  return {
    role: "galera-node",
    following: state === "Synced" && value("wsrep_ready") === "ON",
    lagMs: null,
    pendingWriteSets: pending,
    detail: `wsrep_local_state_comment=${state}, wsrep_local_recv_queue=${pending}`,
  };
}

/** The replication source's status row, or null on a server that replicates from none. */
async function replicationStatus(db: Db): Promise<StatusRow | null> {
  // SHOW REPLICA STATUS: MariaDB 10.5 and MySQL 8.0.22 on; older servers know only the old name.
  const rows = await sql<StatusRow>`SHOW REPLICA STATUS`
    .execute(db)
    .catch(() => sql<StatusRow>`SHOW SLAVE STATUS`.execute(db));
  return rows.rows[0] ?? null;
}
