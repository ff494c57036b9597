/**
 * What a server that firm-queue reads from (the `readUrl` option) says about its own replication,
 * in the terms of its database: a PostgreSQL hot standby, a MariaDB/MySQL replica, a Galera node,
 * or a server that replicates from no one (a primary: nothing to trail).
 */
export interface ReplicaState {
  readonly role: "standby" | "replica" | "galera-node" | "primary";
  /** Whether it is following its primary now (streaming, both replication threads running, Synced). */
  readonly following: boolean;
  /**
   * How far behind its primary it is, in milliseconds, or null when it cannot say (replication
   * stopped; a Galera node, whose lag is counted in write sets, not time).
   */
  readonly lagMs: number | null;
  /** Galera: write sets received and not yet applied (`wsrep_local_recv_queue`). */
  readonly pendingWriteSets?: number;
  /** What the figures were read from, for the operator: e.g. `Seconds_Behind_Master=3`. */
  readonly detail: string;
}

/** A server replicating from no one: reads from it are as fresh as its writes. */
export const NOT_A_REPLICA: ReplicaState = { role: "primary", following: true, lagMs: 0, detail: "not a replica" };
