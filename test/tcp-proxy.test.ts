import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "./support/harness.js";
import { TcpProxy } from "./support/tcp-proxy.js";

/** A client connection that collects what it receives and how it ended. */
interface Client {
  readonly socket: Socket;
  received(): string;
  readonly closed: Promise<{ error: string | null }>;
}

function client(port: number): Client {
  const socket = connect({ host: "127.0.0.1", port });
  let data = "";
  let error: string | null = null;
  socket.on("data", (chunk) => (data += chunk.toString()));
  socket.on("error", (cause: NodeJS.ErrnoException) => (error = cause.code ?? cause.message));
  const closed = new Promise<{ error: string | null }>((resolve) => socket.on("close", () => resolve({ error })));
  return { socket, received: () => data, closed };
}

describe("TcpProxy (test support)", () => {
  let echo: Server;
  let serverSockets: Socket[];
  let proxy: TcpProxy;

  beforeEach(async () => {
    serverSockets = [];
    // Echoes each chunk back in upper case, so the test can tell the reply from its own bytes.
    echo = createServer((socket) => {
      serverSockets.push(socket);
      socket.on("error", () => {});
      socket.on("data", (chunk) => socket.write(chunk.toString().toUpperCase()));
    });
    await new Promise<void>((resolve) => echo.listen({ host: "127.0.0.1", port: 0 }, () => resolve()));
    const address = echo.address() as { port: number };
    proxy = await TcpProxy.start({ host: "127.0.0.1", port: address.port });
  });

  afterEach(async () => {
    await proxy.close();
    for (const socket of serverSockets) socket.destroy();
    await new Promise((resolve) => echo.close(resolve));
  });

  it("passes traffic both ways and rewrites URLs to point at itself", async () => {
    const c = client(proxy.port);
    c.socket.write("hello");
    await waitFor(() => c.received() === "HELLO", 5000, "the echo");
    expect(proxy.rewrite("postgres://user@10.0.0.1:5432/db?x=1")).toBe(
      `postgres://user@127.0.0.1:${proxy.port}/db?x=1`,
    );
    expect(proxy.connections).toBe(1);
    c.socket.destroy();
  });

  it("dropAll resets both ends of every connection; new connections still pass", async () => {
    const c = client(proxy.port);
    c.socket.write("a");
    await waitFor(() => c.received() === "A", 5000, "the echo");
    expect(proxy.dropAll()).toBe(1);
    expect((await c.closed).error).toBe("ECONNRESET");
    await waitFor(() => serverSockets[0]!.destroyed, 5000, "the server side closed");
    expect(proxy.stats.dropped).toBe(1);
    const again = client(proxy.port);
    again.socket.write("b");
    await waitFor(() => again.received() === "B", 5000, "the echo after the drop");
    again.socket.destroy();
  });

  it("stall holds data in both directions with the sockets open, and delivers it when passing again", async () => {
    const c = client(proxy.port);
    c.socket.write("x");
    await waitFor(() => c.received() === "X", 5000, "the echo");
    proxy.setMode("stall");
    c.socket.write("y");
    const late = client(proxy.port);
    late.socket.write("z");
    // Nothing may arrive while stalled; a quiet period is the only way to observe "nothing".
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(c.received()).toBe("X");
    expect(late.received()).toBe("");
    expect(c.socket.destroyed || late.socket.destroyed).toBe(false);
    proxy.setMode("pass");
    await waitFor(() => c.received() === "XY" && late.received() === "Z", 5000, "the held data delivered");
    c.socket.destroy();
    late.socket.destroy();
  });

  it("refuse resets new connections and keeps the existing ones", async () => {
    const kept = client(proxy.port);
    kept.socket.write("k");
    await waitFor(() => kept.received() === "K", 5000, "the echo");
    proxy.setMode("refuse");
    const refused = client(proxy.port);
    refused.socket.write("r");
    expect((await refused.closed).error).toBe("ECONNRESET");
    expect(refused.received()).toBe("");
    expect(proxy.stats.refused).toBe(1);
    kept.socket.write("l");
    await waitFor(() => kept.received() === "KL", 5000, "the existing connection still passing");
    proxy.setMode("pass");
    const after = client(proxy.port);
    after.socket.write("m");
    await waitFor(() => after.received() === "M", 5000, "a new connection after refusing");
    kept.socket.destroy();
    after.socket.destroy();
  });

  it("a server that closes cleanly closes the client after delivering its last bytes", async () => {
    const c = client(proxy.port);
    c.socket.write("q");
    await waitFor(() => c.received() === "Q", 5000, "the echo");
    serverSockets[0]!.end("bye");
    expect((await c.closed).error).toBeNull();
    expect(c.received()).toBe("Qbye");
    await waitFor(() => proxy.connections === 0, 5000, "the pair forgotten");
  });
});
