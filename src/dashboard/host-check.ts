import { isLoopbackAddress } from "./loopback.js";

/** A Host header (or an Origin's host), checked and normalised. */
export interface RequestHost {
  /** `hostname[:port]` as the WHATWG URL parser writes it: lower case, IPv4 in dotted form, port 80 dropped. */
  readonly host: string;
  /** The name or address alone; IPv6 in brackets. */
  readonly hostname: string;
  /** The port as written, "" when none. */
  readonly port: string;
}

/**
 * What a Host header may look like: a name or IPv4 address (letters, digits, `.`, `-`, `_`) or an
 * IPv6 address in brackets, and an optional port. Anything else (spaces, `@`, `/`, `%`, `<`, an
 * empty value) is not a host this dashboard can be reached by.
 */
const HOST_SYNTAX = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::[0-9]{1,5})?$/;

/** Parse a Host value; null when it is not one (the request then gets a 400). */
export function parseHost(value: string | undefined | null): RequestHost | null {
  if (typeof value !== "string" || !HOST_SYNTAX.test(value)) return null;
  try {
    // The URL parser applies the same rules a browser does (port range, IPv4 shorthands).
    const url = new URL(`http://${value}/`);
    return { host: url.host, hostname: url.hostname, port: url.port };
  } catch {
    return null;
  }
}

/**
 * Whether a host is this machine's loopback: `localhost`, or an IP literal in 127.0.0.0/8 or
 * ::1. DNS rebinding cannot produce one of these: a rebound page's requests carry the attacker's
 * name, and a browser connects to an address-shaped name without asking DNS.
 */
export function isLoopbackHost(host: RequestHost): boolean {
  if (host.hostname === "localhost") return true;
  const address = host.hostname.startsWith("[") ? host.hostname.slice(1, -1) : host.hostname;
  return isLoopbackAddress(address);
}

/**
 * Which hosts a dashboard answers for: `allowed` when the user listed them (an entry without a
 * port matches every port), otherwise loopback only without authentication and any host with it.
 */
export function hostAllowed(
  host: RequestHost,
  allowed: readonly RequestHost[] | null,
  authenticated: boolean,
): boolean {
  if (allowed !== null)
    return allowed.some((entry) => entry.hostname === host.hostname && (entry.port === "" || entry.port === host.port));
  return authenticated || isLoopbackHost(host);
}
