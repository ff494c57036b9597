// Network namespaces as "hosts" for the multi-host tests and bench (Linux, root): a bridge in the root
// namespace holding the database's address, and per host a namespace joined to the bridge by a
// veth pair. Cutting a host sets its bridge-side veth down: its packets are dropped without a
// reset, as in a real partition. Everything is named after a random run id, so parallel runs do
// not collide, and removed by destroy() — or by a watchdog if this process dies first.

import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";

/** @typedef {import("./netns.d.mts").NetnsHost} NetnsHost */
/** @typedef {import("./netns.d.mts").NetnsNetwork} NetnsNetwork */

/** @param {string[]} args */
const ip = (...args) => execFileSync("ip", args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });

/** Null when namespaces can be made here, else why not (not root, no `ip`, no permission…). */
/** @returns {string | null} */
export function netnsUnavailableReason() {
  if (process.platform !== "linux") return "network namespaces need Linux";
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return "network namespaces need root";
  const probe = `fqprobe${randomBytes(3).toString("hex")}`;
  try {
    ip("netns", "add", probe);
    ip("netns", "del", probe);
    return null;
  } catch (error) {
    return `cannot create a network namespace (${firstLine(error)}); is iproute2 installed and CAP_NET_ADMIN granted?`;
  }
}

/** A third octet for 10.231.N.0/24 that no interface on this machine uses yet. */
function freeSubnet() {
  const used = ip("-4", "-o", "addr", "show");
  const candidates = [...Array(254).keys()].map((n) => n + 1).filter((n) => !used.includes(` 10.231.${n}.`));
  if (candidates.length === 0) throw new Error("no free 10.231.N.0/24 subnet left for the test network");
  return /** @type {number} */ (candidates[Math.floor(Math.random() * candidates.length)]);
}

// Arguments: $1 pid to watch, $2 run id. Removes what that run made once the pid is gone.
const WATCHDOG = `
while kill -0 "$1" 2>/dev/null && ! grep -q ') Z' "/proc/$1/stat" 2>/dev/null; do sleep 1; done
for ns in $(ip netns list | awk '{print $1}' | grep "^fq$2h"); do
  for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null; done
  ip netns del "$ns" 2>/dev/null
done
ip link del "fq$2br" 2>/dev/null
`;

/** Make a bridge and `count` hosts on a fresh /24. Throws (having removed what it made) on failure. */
/** @param {number} count @returns {NetnsNetwork} */
export function createNetwork(count) {
  const id = randomBytes(3).toString("hex");
  const bridge = `fq${id}br`;
  /** @type {string[]} */
  const namespaces = [];
  let destroyed = false;
  const watchdog = spawn("/bin/sh", ["-c", WATCHDOG, "firm-queue-netns-watchdog", String(process.pid), id], {
    detached: true,
    stdio: "ignore",
  });
  watchdog.unref();

  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    for (const namespace of namespaces) {
      for (const pid of String(quiet(() => ip("netns", "pids", namespace)))
        .split(/\s+/)
        .filter(Boolean))
        quiet(() => process.kill(Number(pid), "SIGKILL"));
      // Deleting the namespace deletes the veth end inside it, and with it the pair.
      quiet(() => ip("netns", "del", namespace));
    }
    quiet(() => ip("link", "del", bridge));
    watchdog.kill("SIGKILL");
  };

  try {
    const octet = freeSubnet();
    const prefix = `10.231.${octet}`;
    const bridgeAddress = `${prefix}.1`;
    ip("link", "add", bridge, "type", "bridge");
    ip("addr", "add", `${bridgeAddress}/24`, "dev", bridge);
    ip("link", "set", bridge, "up");
    /** @type {NetnsHost[]} */
    const hosts = [];
    for (let index = 1; index <= count; index++) {
      const namespace = `fq${id}h${index}`;
      const outside = `fq${id}v${index}`;
      const address = `${prefix}.${10 + index}`;
      ip("netns", "add", namespace);
      namespaces.push(namespace);
      ip("link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", namespace);
      ip("link", "set", outside, "master", bridge);
      ip("link", "set", outside, "up");
      ip("-n", namespace, "addr", "add", `${address}/24`, "dev", "eth0");
      ip("-n", namespace, "link", "set", "eth0", "up");
      ip("-n", namespace, "link", "set", "lo", "up");
      hosts.push({
        namespace,
        address,
        cut: () => void ip("link", "set", outside, "down"),
        restore: () => void ip("link", "set", outside, "up"),
        command: (program, args) => ["ip", ["netns", "exec", namespace, program, ...args]],
      });
    }
    return { id, bridgeAddress, subnet: `${prefix}.0/24`, hosts, destroy };
  } catch (error) {
    destroy();
    throw error;
  }
}

/** @template T @param {() => T} work @returns {T | ""} */
function quiet(work) {
  try {
    return work();
  } catch {
    return "";
  }
}

/** @param {unknown} error */
function firstLine(error) {
  const text =
    /** @type {{ stderr?: string }} */ (error).stderr || (error instanceof Error ? error.message : String(error));
  return text.trim().split("\n")[0] ?? "";
}
