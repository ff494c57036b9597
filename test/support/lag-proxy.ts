import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP relay that holds every chunk for `delayMs` before passing it on, in order: the link of a
 * replica that trails its primary by that much. When either side goes away, the other is cut at
 * once and whatever was still held is dropped — what a primary that died had not got across yet.
 */
export class LagProxy {
  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly live: Set<Socket>,
  ) {}

  static async start(target: { host: string; port: number }, delayMs: number): Promise<LagProxy> {
    const live = new Set<Socket>();
    const server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      live.add(client).add(upstream);
      const link = { cut: false };
      const cut = () => {
        link.cut = true;
        client.destroy();
        upstream.destroy();
        live.delete(client);
        live.delete(upstream);
      };
      relay(client, upstream, delayMs, link, cut);
      relay(upstream, client, delayMs, link, cut);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ port: 0, host: "127.0.0.1" }, resolve);
    });
    const address = server.address();
    return new LagProxy(server, typeof address === "object" && address ? address.port : 0, live);
  }

  async close(): Promise<void> {
    for (const socket of this.live) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function relay(from: Socket, to: Socket, delayMs: number, link: { cut: boolean }, cut: () => void): void {
  from.on("data", (chunk) => {
    setTimeout(() => {
      if (!link.cut) to.write(chunk);
    }, delayMs);
  });
  from.on("close", cut);
  from.on("error", cut);
}
