import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigurationError } from "./errors.js";

/** A server of firm-queue's own, listening. */
export interface ListeningServer {
  /** Where it listens, e.g. `http://127.0.0.1:9000/` (an IPv6 address in brackets). */
  readonly url: string;
  /** Stop listening and drop the connections still open (keep-alive ones included). */
  close(): Promise<void>;
}

/**
 * Make `server` listen on `host:port` (0 picks a free port); `path` is appended to the URL it
 * reports. A port in use or an address not on this host fails with a ConfigurationError that
 * names the address, rather than a bare EADDRINUSE.
 */
export async function listenOn(server: Server, port: number, host: string, path = "/"): Promise<ListeningServer> {
  await new Promise<void>((resolve, reject) => {
    const refused = (error: Error) =>
      reject(new ConfigurationError(`could not listen on ${host}:${port}: ${error.message}`, { cause: error }));
    server.once("error", refused);
    server.listen(port, host, () => {
      server.off("error", refused);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}${path}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
