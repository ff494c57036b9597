import { spawn } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

// A PostgreSQL server shutting down ("fast" mode) may finish a client's startup and terminate it
// in one breath: ReadyForQuery and the FATAL admin_shutdown ErrorResponse arrive in the same TCP
// chunk. node-postgres parses both in one go, so the pool hands the new connection out and the
// error is emitted before the caller has run another line. Found by the chaos suite (a worker
// died with "terminating connection due to administrator command" during a server restart).
// No real server can produce that interleaving on demand; this stand-in speaks just enough of
// the protocol to do it every time.

const DIST = fileURLToPath(new URL("../dist/database/", import.meta.url));

/** A server that answers every startup with "ready" and, in the same write, a fatal admin shutdown. */
function readyThenTerminated(): Promise<{ server: Server; port: number }> {
  const message = (type: string, body: Buffer) => {
    const header = Buffer.alloc(5);
    header.write(type, 0, "latin1");
    header.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([header, body]);
  };
  const field = (code: string, text: string) => Buffer.from(`${code}${text}\0`, "utf8");
  const authenticationOk = message("R", Buffer.from([0, 0, 0, 0]));
  const readyForQuery = message("Z", Buffer.from("I", "latin1"));
  const adminShutdown = message(
    "E",
    Buffer.concat([
      field("S", "FATAL"),
      field("V", "FATAL"),
      field("C", "57P01"),
      field("M", "terminating connection due to administrator command"),
      Buffer.from([0]),
    ]),
  );
  const server = createServer((socket: Socket) => {
    socket.once("data", () => {
      socket.write(Buffer.concat([authenticationOk, readyForQuery, adminShutdown]));
      socket.end();
    });
    socket.on("error", () => undefined);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve({ server, port: typeof address === "object" && address ? address.port : 0 });
    });
  });
}

/** Run firm-queue's PostgreSQL pool against `port` in a process of its own; resolves to its exit and output. */
function queryThroughOwnPool(port: number): Promise<{ code: number | null; output: string }> {
  const module = (name: string) => pathToFileURL(`${DIST}${name}`).href;
  const script = `
    const { sql } = await import("kysely");
    const { postgresAdapter } = await import(${JSON.stringify(module("postgres.js"))});
    const { parseDatabaseUrl } = await import(${JSON.stringify(module("url.js"))});
    const db = await postgresAdapter.open(parseDatabaseUrl("postgres://firm@127.0.0.1:${port}/firm"), {
      poolSize: 2, queryTimeout: 5000, connectTimeout: 5000, keepAliveDelay: 10000,
    });
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        await sql\`SELECT 1\`.execute(db);
        console.log("query " + attempt + " succeeded");
      } catch (error) {
        console.log("query " + attempt + " failed: " + error.message);
      }
    }
    await db.destroy();
    console.log("process survived");
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("a new PostgreSQL connection terminated in the same breath as it became ready", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("fails the query that wanted it, and the process goes on", async () => {
    const fake = await readyThenTerminated();
    server = fake.server;
    const { code, output } = await queryThroughOwnPool(fake.port);
    expect(output).toContain("process survived");
    expect(code, output).toBe(0);
    // Each attempt got a fresh connection that died at once: every query failed, none hung.
    expect(output.match(/failed: /g)).toHaveLength(3);
  }, 30_000);
});
