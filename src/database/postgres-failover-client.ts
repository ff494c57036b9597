import type pg from "pg";
import { ReadOnlyDatabaseError } from "../errors.js";
import { isReadOnly } from "./postgres-failover.js";
import type { PostgresHosts } from "./postgres-hosts.js";

// pg.Client.on is overloaded per event; listeners are stored and passed on untyped, as the EventEmitter does.
type Listener = (...args: unknown[]) => void;

/**
 * One connection (the LISTEN connection) to a URL that lists several servers: `connect()` tries
 * them in order and keeps the first that answers (and takes writes, with `read-write`: LISTEN is
 * refused during recovery anyway, and NOTIFY is sent on the primary). Listeners added before
 * `connect()` go to the connection it keeps; the ones it tried and dropped report nothing.
 */
export class FailoverClient {
  private client: pg.Client | undefined;
  private readonly listeners: [string, Listener][] = [];

  constructor(
    private readonly targets: PostgresHosts,
    private readonly open: (url: string) => pg.Client,
  ) {}

  on(event: string, listener: Listener): this {
    this.listeners.push([event, listener]);
    this.client?.on(event as "error", listener as (error: Error) => void);
    return this;
  }

  async connect(): Promise<void> {
    const readOnly: string[] = [];
    let lastError: unknown;
    for (const host of this.targets.hosts) {
      const client = this.open(host.url);
      client.on("error", () => undefined);
      try {
        await client.connect();
        if (!this.targets.readWrite || !(await isReadOnly(client))) {
          this.client = client;
          for (const [event, listener] of this.listeners)
            client.on(event as "error", listener as (error: Error) => void);
          return;
        }
        readOnly.push(host.address);
      } catch (error) {
        lastError = error;
      }
      await client.end().catch(() => undefined);
    }
    throw lastError ?? new ReadOnlyDatabaseError(readOnly);
  }

  query(text: string): Promise<pg.QueryResult> {
    if (!this.client) return Promise.reject(new Error("FailoverClient.query before connect"));
    return this.client.query(text);
  }

  async end(): Promise<void> {
    await this.client?.end();
  }
}
