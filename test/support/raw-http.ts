import { connect } from "node:net";

/** Host headers that are not hosts: each one crashed `new URL()` or would name another host. */
export const BAD_HOSTS = ["x:99999", "", "a b", "a%zz", "[", "a<b", "evil.example/x", "ops@evil.example", "[::1"];

/** What came back on a raw connection: the first status code (null when none), the text, whether it timed out. */
export interface RawAnswer {
  readonly status: number | null;
  readonly text: string;
  readonly timedOut: boolean;
}

/**
 * Send `bytes` as they are on a fresh TCP connection and read until the server closes it (or
 * `timeoutMs` passes). An HTTP client would fix a malformed request line or Host header before
 * sending it; this does not, which is what testing a server's parsing needs.
 */
export function rawExchange(port: number, bytes: string | Buffer, timeoutMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1");
    let settled = false;
    const finish = (timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: status ? Number(status[1]) : null, text, timedOut });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("end", () => finish(false));
    socket.on("close", () => finish(false));
    // A reset after the answer (the server closing a half-read request) is not a failure here.
    socket.on("error", () => finish(false));
    socket.write(bytes);
  });
}

/** One HTTP/1.1 request with `Connection: close`, written byte for byte as given (Host included). */
export function rawRequest(
  port: number,
  request: {
    readonly method?: string;
    readonly target: string;
    readonly host?: string | null;
    readonly headers?: Record<string, string>;
    readonly body?: string;
  },
): Promise<RawAnswer> {
  const lines = [`${request.method ?? "GET"} ${request.target} HTTP/1.1`];
  if (request.host !== null) lines.push(`Host: ${request.host ?? `127.0.0.1:${port}`}`);
  for (const [name, value] of Object.entries(request.headers ?? {})) lines.push(`${name}: ${value}`);
  if (request.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(request.body)}`);
  lines.push("Connection: close");
  return rawExchange(port, `${lines.join("\r\n")}\r\n\r\n${request.body ?? ""}`);
}

/** The body of an answer (after the head). */
export function bodyOf(answer: RawAnswer): string {
  const at = answer.text.indexOf("\r\n\r\n");
  return at < 0 ? "" : answer.text.slice(at + 4);
}

/**
 * Whether a response shows what a client must never see: a stack frame, Node's internals, or a
 * path on this machine.
 */
export function leaksInternals(text: string): boolean {
  return (
    /\n\s*at\s|&nbsp;at\s|\bat (?:file:\/\/|node:)|node:internal|node_modules/.test(text) ||
    text.includes(process.cwd())
  );
}
