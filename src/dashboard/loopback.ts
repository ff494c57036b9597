import { BlockList, isIP } from "node:net";

/**
 * The loopback ranges: IPv4 127.0.0.0/8 and IPv6 ::1. Node's BlockList also matches the other
 * spellings of these addresses (IPv4-mapped `::ffff:127.0.0.1`, `0:0:0:0:0:0:0:1`), which a
 * pattern on the text would miss or, worse, match in a host name such as `127.evil.example`.
 */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Whether `address` is an IP address literal in a loopback range (a name is never one). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 6 ? "ipv6" : "ipv4");
}

/**
 * Whether listening on `host` keeps the dashboard on this machine: a loopback IP literal or the
 * name `localhost`. Any other name is refused whatever it resolves to today, since what a name
 * resolves to is up to whoever controls its DNS.
 */
export function isLoopbackBindHost(host: string): boolean {
  return host === "localhost" || isLoopbackAddress(host);
}
