// A throwaway Redis for the BullMQ comparison: random loopback port, temp dir, no persistence.
// Started through the same launcher as the test suite's servers, so it never outlives us.
import { findExecutable, launch, pathDirs, probeTcp } from "../../scripts/servers/common.mjs";

/** The redis-server binary, or null when Redis is not installed. */
export function redisServerBinary() {
  return findExecutable("redis-server", [...pathDirs(), "/usr/bin", "/usr/local/bin", "/usr/sbin"]);
}

/** @returns {Promise<import("../../scripts/servers/types.js").RunningServer>} */
export async function startRedis() {
  const binary = redisServerBinary();
  if (!binary) throw new Error("redis-server not found (Debian: apt-get install redis-server).");
  return launch({
    label: "Redis",
    prefix: "firm-queue-redis-",
    user: "redis",
    init: async () => {},
    command: binary,
    args: (port, dir) => [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      // Data dies with the run: no snapshots, no append-only file.
      "--save",
      "",
      "--appendonly",
      "no",
      "--daemonize",
      "no",
    ],
    isReady: answersPing,
    shutdownSignal: "SIGTERM",
    url: (port) => `redis://127.0.0.1:${port}`,
  });
}

/** True once the server answers PING on a fresh connection. @param {number} port */
function answersPing(port) {
  return probeTcp(port, { greeting: "PING\r\n", ready: (data) => data.toString("latin1").startsWith("+PONG") });
}
