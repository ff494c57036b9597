import { EventEmitter } from "node:events";
import { DEFAULT_CONNECTION_SETTINGS } from "../src/database/connection-settings.js";
import { describe, expect, it } from "vitest";
import { listenForReadyJobs, type ListenerClient } from "../src/database/postgres-listener.js";
import { parseDatabaseUrl } from "../src/database/url.js";

/** A stand-in for pg.Client whose LISTEN can be made to fail the way a dropped connection does. */
class FakeClient extends EventEmitter {
  ended = false;
  constructor(private readonly dropDuringListen: boolean) {
    super();
  }
  async connect(): Promise<void> {}
  async query(): Promise<unknown> {
    if (!this.dropDuringListen) return {};
    // The connection dies while LISTEN is in flight: pg emits 'error' and rejects the query.
    const error = Object.assign(new Error("Connection terminated unexpectedly"), { code: "ECONNRESET" });
    this.emit("error", error);
    throw error;
  }
  async end(): Promise<void> {
    this.ended = true;
  }
}

describe("the PostgreSQL LISTEN connection", () => {
  it("reconnects in one loop when the connection drops during LISTEN, and close() leaves nothing open", async () => {
    const clients: FakeClient[] = [];
    const stop = await listenForReadyJobs(
      parseDatabaseUrl("postgres://nobody@127.0.0.1:1/none"),
      { poolSize: 1, ...DEFAULT_CONNECTION_SETTINGS },
      () => undefined,
      () => undefined,
      async () => {
        const client = new FakeClient(clients.length === 0);
        clients.push(client);
        return client as unknown as ListenerClient;
      },
    );
    // The first retry comes after 500 ms; a second loop would have made a third client by now.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(clients).toHaveLength(2);
    await stop();
    expect(clients.every((client) => client.ended)).toBe(true);
  });
});
