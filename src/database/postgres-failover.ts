import type pg from "pg";
import { ReadOnlyDatabaseError } from "../errors.js";
import type { PostgresHost } from "./postgres-hosts.js";

/** One server of a multi-host URL, with the pg pool that connects to it. */
export interface HostPool {
  readonly host: PostgresHost;
  readonly pool: pg.Pool;
}

/** What a connection source hands out: pg's pool or {@link FailoverPool}. */
export interface ConnectionSource {
  connect(): Promise<pg.PoolClient>;
  end(): Promise<void>;
}

/** `SHOW transaction_read_only` is `on` on a hot standby: libpq's own test for `read-write`. */
export async function isReadOnly(client: Pick<pg.ClientBase, "query">): Promise<boolean> {
  const { rows } = await client.query<{ transaction_read_only: string }>("SHOW transaction_read_only");
  return rows[0]?.transaction_read_only === "on";
}

/**
 * Connections to whichever listed server takes writes, as libpq does for
 * `host1,host2/…?target_session_attrs=read-write` (pg cannot). Connections come from the
 * current server's pool; one that cannot connect, or that turns out read-only, moves the
 * current server to the next in the list, and the next one is tried at once, each server once per
 * call. So after the primary dies and a standby is promoted, the first connect that fails on the
 * old primary finds the new one, and the processes follow without a restart. A fresh physical
 * connection is tested once (one `SHOW`), a reused one not at all: the hot path pays nothing.
 * When every server refused, the call fails with the last connection error, or with
 * {@link ReadOnlyDatabaseError} when the reachable ones were all read-only.
 */
export class FailoverPool implements ConnectionSource {
  private active = 0;
  private readonly tested = new WeakSet<pg.PoolClient>();

  constructor(
    readonly pools: readonly HostPool[],
    private readonly readWrite: boolean,
  ) {}

  /** The server connections come from now. */
  get current(): HostPool {
    return this.pools[this.active]!;
  }

  async connect(): Promise<pg.PoolClient> {
    const readOnly: string[] = [];
    let lastError: unknown;
    for (let tried = 0; tried < this.pools.length; tried++) {
      const index = this.active;
      const { host, pool } = this.pools[index]!;
      let client: pg.PoolClient | undefined;
      try {
        client = await pool.connect();
        if (!this.readWrite || this.tested.has(client) || !(await isReadOnly(client))) {
          this.tested.add(client);
          return client;
        }
        client.release(true);
        readOnly.push(host.address);
      } catch (error) {
        client?.release(true);
        lastError = error;
      }
      // Another caller may have moved on already; only move from the server that failed.
      if (this.active === index) this.active = (index + 1) % this.pools.length;
    }
    if (readOnly.length > 0 && lastError === undefined) throw new ReadOnlyDatabaseError(readOnly);
    throw lastError ?? new ReadOnlyDatabaseError(readOnly);
  }

  async end(): Promise<void> {
    await Promise.all(this.pools.map(({ pool }) => pool.end()));
  }
}
