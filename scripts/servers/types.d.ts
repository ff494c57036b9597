// Types shared by the server scripts (JSDoc in the .mjs files and the .d.mts
// declarations both point here). Types only: nothing imports this at run time.

export interface ServerOptions {
  /** How long to wait for the server to accept connections. Default 30 000 ms. */
  timeoutMs?: number;
  /** Where to create the server's temp dir. Default: the OS temp dir. */
  parentDir?: string;
  /**
   * Keep the server's usual crash safety (PostgreSQL: fsync, synchronous_commit and
   * full_page_writes on; MariaDB: the redo log flushed at every commit, doublewrite on) instead of
   * switching it off for speed. For benchmarks that must measure what users run. Default false.
   */
  durable?: boolean;
  /**
   * Addresses to listen on besides 127.0.0.1 (the multi-host tests' bridge address). Each must
   * already be assigned to an interface, or the server cannot bind it.
   */
  extraListenAddresses?: string[];
  /** Networks (CIDR, e.g. 10.231.7.0/24) whose clients may log in as the passwordless superuser. */
  clientNetworks?: string[];
  /** PostgreSQL only: more server settings, as `-c name=value`. */
  settings?: Record<string, string>;
  /** MariaDB only: more server options, as `--name=value` (e.g. performance_schema for a benchmark). */
  mariadbOptions?: Record<string, string>;
}

export interface RunningServer {
  /** Admin URL: superuser, no password, on 127.0.0.1. */
  url: string;
  /** The server's log, inside its temp dir (gone after stop()). */
  logFile: string;
  /** Settles when the server process first started is gone, whatever the reason. */
  exited: Promise<void>;
  /**
   * Shuts the server down the usual way (clients are disconnected) and starts it again on the
   * same port and data, resolving once it accepts connections. For fault-injection tests.
   */
  restart(): Promise<void>;
  /** Shuts the server down and removes its temp dir. Safe to call twice. */
  stop(): Promise<void>;
}
