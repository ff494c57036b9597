import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * What the proxy does with traffic:
 * - `pass`: forward both ways;
 * - `stall`: forward nothing, keep every socket open (a network that silently stops delivering);
 *   connections made meanwhile are accepted and held until the stall ends;
 * - `refuse`: reset each new connection at once (existing ones keep passing).
 */
export type ProxyMode = "pass" | "stall" | "refuse";

/** Running totals, for the test's report. */
export interface ProxyStats {
  accepted: number;
  refused: number;
  /** Connections ended by {@link TcpProxy.dropAll}. */
  dropped: number;
}

/** One client connection and its upstream twin. */
interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
}

/**
 * A TCP proxy on 127.0.0.1 in front of a server (a database), for fault injection: the test moves
 * it between {@link ProxyMode}s and cuts every connection with {@link dropAll}, while the code
 * under test only sees a flaky network.
 */
export class TcpProxy {
  private readonly pairs = new Set<Pair>();
  private currentMode: ProxyMode = "pass";
  readonly stats: ProxyStats = { accepted: 0, refused: 0, dropped: 0 };

  private constructor(
    private readonly server: Server,
    /** The port clients connect to. */
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** Listen on a free loopback port and forward to `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: "127.0.0.1", port: 0, exclusive: true }, () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("the proxy has no TCP address");
    const proxy = new TcpProxy(server, address.port, target);
    server.on("connection", (socket) => proxy.accept(socket));
    return proxy;
  }

  get mode(): ProxyMode {
    return this.currentMode;
  }

  /** Connections open right now. */
  get connections(): number {
    return this.pairs.size;
  }

  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = "127.0.0.1";
    parsed.port = String(this.port);
    return parsed.href;
  }

  setMode(mode: ProxyMode): void {
    const wasStalled = this.currentMode === "stall";
    this.currentMode = mode;
    if (wasStalled && mode !== "stall") {
      for (const pair of this.pairs) {
        pair.client.resume();
        pair.upstream.resume();
      }
    } else if (!wasStalled && mode === "stall") {
      for (const pair of this.pairs) {
        pair.client.pause();
        pair.upstream.pause();
      }
    }
  }

  /** Destroy every open connection, both ends at once, as a network reset would. Returns how many. */
  dropAll(): number {
    const count = this.pairs.size;
    for (const pair of [...this.pairs]) this.end(pair, true);
    this.stats.dropped += count;
    return count;
  }

  /** Stop listening and drop every connection. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.dropAll();
    await closed;
  }

  private accept(client: Socket): void {
    if (this.currentMode === "refuse") {
      this.stats.refused++;
      client.resetAndDestroy();
      return;
    }
    this.stats.accepted++;
    client.setNoDelay(true);
    const upstream = connect({ host: this.target.host, port: this.target.port });
    upstream.setNoDelay(true);
    const pair: Pair = { client, upstream };
    this.pairs.add(pair);
    // A failing side resets the other; a side that closes cleanly closes the other once what it
    // sent last (say, the server's goodbye message) is delivered.
    for (const socket of [client, upstream]) {
      socket.on("error", () => this.end(pair, true));
      socket.on("close", () => this.end(pair, false));
    }
    this.forward(client, upstream);
    this.forward(upstream, client);
    if (this.currentMode === "stall") {
      client.pause();
      upstream.pause();
    }
  }

  /** Copy `from` to `to`, honouring backpressure unless stalled (then the pause is the stall's). */
  private forward(from: Socket, to: Socket): void {
    from.on("data", (chunk: Buffer) => {
      if (to.destroyed) return;
      if (!to.write(chunk) && this.currentMode !== "stall") {
        from.pause();
        to.once("drain", () => {
          if (this.currentMode !== "stall") from.resume();
        });
      }
    });
  }

  private end(pair: Pair, reset: boolean): void {
    if (!this.pairs.delete(pair)) return;
    for (const socket of [pair.client, pair.upstream]) {
      if (socket.destroyed) continue;
      // A reset, not a polite FIN: the peer sees the connection die, as after a network failure.
      if (reset) socket.resetAndDestroy();
      else socket.end();
    }
  }
}
