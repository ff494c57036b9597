import { sql } from "kysely";
import type { Db } from "./dialect.js";
import { NOT_A_REPLICA, type ReplicaState } from "./replica-state.js";

interface StandbyRow {
  readonly in_recovery: boolean;
  readonly replayed_all: boolean;
  readonly since_replay_ms: number | string | null;
  readonly receiver_status: string | null;
  readonly transit_ms: number | string | null;
}

/**
 * A hot standby's lag, read on the standby. Two parts, the larger wins: WAL received and not yet
 * replayed (then the age of the last replayed transaction, `pg_last_xact_replay_timestamp()`;
 * nothing waiting is no lag, however long ago the primary last wrote), and WAL on its way (the
 * last message's send time on the primary to its receipt here, `pg_stat_wal_receiver`: a slow or
 * distant link, which the first part cannot see because the WAL has not arrived). The second
 * compares two machines' clocks, so clock skew shows up in it. A standby whose WAL receiver is
 * not streaming (its primary gone, or replication broken) is not following and its lag unknown.
 */
export async function postgresReplicaState(db: Db): Promise<ReplicaState> {
  const { rows } = await sql<StandbyRow>`
    SELECT pg_is_in_recovery() AS in_recovery,
      pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() AS replayed_all,
      EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000 AS since_replay_ms,
      receiver.status AS receiver_status,
      EXTRACT(EPOCH FROM receiver.last_msg_receipt_time - receiver.last_msg_send_time) * 1000 AS transit_ms
    FROM (SELECT 1) AS one LEFT JOIN pg_stat_wal_receiver AS receiver ON true`.execute(db);
  const row = rows[0];
  if (!row?.in_recovery) return NOT_A_REPLICA;
  if (row.receiver_status !== "streaming")
    return {
      role: "standby",
      following: false,
      lagMs: null,
      detail: `WAL receiver ${row.receiver_status ?? "not running"}`,
    };
  const waiting = row.replayed_all ? 0 : Math.max(0, Number(row.since_replay_ms ?? 0));
  const transit = Math.max(0, Number(row.transit_ms ?? 0));
  return {
    role: "standby",
    following: true,
    lagMs: Math.round(Math.max(waiting, transit)),
    detail: row.replayed_all
      ? `all received WAL replayed; last message ${Math.round(transit)} ms in transit`
      : `replaying WAL; last replayed transaction ${Math.round(waiting)} ms old`,
  };
}
