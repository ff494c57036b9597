import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { parseHost, type RequestHost } from "./host-check.js";
import type { DashboardAuthRequest, ResolvedDashboardOptions } from "./options.js";

/** The cookie that binds a browser to its CSRF token. */
export const CSRF_COOKIE = "firm_queue_csrf";

/**
 * Headers on every response. The policy allows scripts and styles from the dashboard's own
 * /assets only — no inline script or style — so markup smuggled into a job's arguments could
 * not run even if escaping failed; no framing, and no referrer sent to other sites (cursors and job ids stay here); same-origin
 * requests keep theirs, so browsers send a real Origin with form posts.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
};

/** Compare secrets in constant time (different lengths fail without leaking which bytes differ). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether the request carries the configured credentials: basic or bearer, either one when both
 * are set. True when neither is configured.
 */
export function hasCredentials(request: DashboardAuthRequest, options: ResolvedDashboardOptions): boolean {
  if (!options.basicAuth && !options.bearerToken) return true;
  const header = request.header("authorization") ?? "";
  const [scheme, value = ""] = header.split(/\s+/, 2) as [string, string?];
  if (options.bearerToken && scheme.toLowerCase() === "bearer") return sameSecret(value, options.bearerToken);
  if (options.basicAuth && scheme.toLowerCase() === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return false;
    // Both halves are always compared, so the time taken does not say which one was wrong.
    const userOk = sameSecret(decoded.slice(0, colon), options.basicAuth.username);
    const passwordOk = sameSecret(decoded.slice(colon + 1), options.basicAuth.password);
    return userOk && passwordOk;
  }
  return false;
}

/** A fresh random value for the CSRF cookie. */
export function newCsrfCookie(): string {
  return randomBytes(24).toString("base64url");
}

/** The token forms carry for a cookie value: an HMAC, so a token cannot be made without the secret. */
export function csrfTokenFor(secret: string, cookie: string): string {
  return createHmac("sha256", secret).update(`csrf:${cookie}`).digest("base64url");
}

/** A cookie's value from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

/**
 * Whether a POST may change anything: the form's token must match the browser's cookie, and a
 * browser that says where the request came from must name the host the request was sent to.
 * That host is `request.host`, which the dashboard has already checked against the hosts it
 * answers for (loopback names without authentication, or `allowedHosts`): after DNS rebinding
 * an attacker's page sends its own name as both Host and Origin, so an Origin matching a Host
 * that was not checked would prove nothing.
 */
export function isSameOriginPost(
  request: DashboardAuthRequest & { readonly host: RequestHost },
  secret: string,
  formToken: string | null,
): boolean {
  const site = request.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin" && site !== "none") return false;
  const origin = request.header("origin");
  // Only the host is compared: behind a TLS-terminating proxy the scheme seen here differs.
  if (origin !== undefined && originHost(origin)?.host !== request.host.host) return false;
  const cookie = readCookie(request.header("cookie"), CSRF_COOKIE);
  if (!cookie || !formToken) return false;
  return sameSecret(formToken, csrfTokenFor(secret, cookie));
}

/** The host of an Origin header; null for `null` and anything else that is not an origin. */
function originHost(origin: string): RequestHost | null {
  try {
    return parseHost(new URL(origin).host);
  } catch {
    return null;
  }
}
