/**
 * How firm-queue's connections guard against a network that goes silent. A peer that vanishes
 * without a reset (a cable pulled, a partition, a NAT or firewall that dropped the connection's
 * state) otherwise leaves a query waiting for the kernel's retransmissions to give up, which on
 * Linux takes about 15 minutes; a process stuck that long cannot even learn that it was pruned.
 */
export interface ConnectionSettings {
  /** Most connections the pool may hold (PostgreSQL and MySQL). */
  readonly poolSize: number;
  /**
   * Longest wait for the answer to one statement, in ms, or null for none. Past it the
   * connection is destroyed (its late answer could otherwise reach the next query) and the
   * statement fails with DatabaseTimeoutError.
   */
  readonly queryTimeout: number | null;
  /** Longest wait to open a connection, in ms. */
  readonly connectTimeout: number;
  /**
   * Idle time before TCP keepalive probes start, in ms. Node (libuv) then probes every second
   * and gives up after ten unanswered probes, so an idle connection to a vanished server (the
   * LISTEN connection, mostly) fails about this long plus 10 s after the silence began.
   */
  readonly keepAliveDelay: number;
}

/** Defaults: well inside the default alive threshold of 5 minutes. */
export const DEFAULT_CONNECTION_SETTINGS: Omit<ConnectionSettings, "poolSize"> = Object.freeze({
  queryTimeout: 30_000,
  connectTimeout: 10_000,
  keepAliveDelay: 10_000,
});
