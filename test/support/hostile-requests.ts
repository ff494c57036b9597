import fc from "fast-check";
import { BAD_HOSTS } from "./raw-http.js";

/**
 * fast-check arbitraries for requests an attacker (or a broken client) sends a dashboard:
 * malformed request lines, Host headers that are not hosts or name another site, paths with
 * bad percent-escapes and forged cursors. `prefix` is where the dashboard is mounted.
 */

/** How many cases each property runs: short by default, FIRM_QUEUE_FUZZ_RUNS for a long run. */
export const FUZZ_RUNS = Number(process.env.FIRM_QUEUE_FUZZ_RUNS ?? 40);

/** A test's time limit that grows with the run count (a long run on a busy machine takes minutes). */
export const FUZZ_TIMEOUT_MS = Math.max(30_000, FUZZ_RUNS * 40);

/** fast-check's parameters: the run count, and FIRM_QUEUE_FUZZ_SEED to replay a reported failure. */
export function fuzzParameters(): fc.Parameters<unknown> {
  const seed = process.env.FIRM_QUEUE_FUZZ_SEED;
  return { numRuns: FUZZ_RUNS, ...(seed ? { seed: Number(seed) } : {}) };
}

/**
 * Any ASCII but a line feed: a CR LF pair inside a field would end the head early, and the rest
 * of the bytes would then be a second request the server rightly waits to see the end of. A
 * lone CR, NUL and the other control characters stay.
 */
const ANY_ASCII = fc.string({ unit: "binary-ascii", maxLength: 12 }).filter((text) => !text.includes("\n"));
const ANY_TEXT = fc.string({ unit: "grapheme", maxLength: 8 });

/** One path segment: a page's name, an escape that does not decode, or anything at all. */
const segment = fc.oneof(
  fc.constantFrom("", "queues", "jobs", "failed", "processes", "recurring", "concurrency", "metrics", "lookup"),
  fc.constantFrom("batches", "rate-limits"),
  fc.constantFrom("assets", "dashboard.js", "dashboard.css", "retry", "pause", "clear", "run", "delete-all", "1"),
  fc.constantFrom("%", "%zz", "%E0%A4%A", "%C3", "%00", "%2F", "%25", "%u0041", "%%", "..", ".", "@", "\\", "~"),
  fc.nat({ max: 2 ** 53 }).map(String),
  ANY_ASCII.filter((text) => !/[\s/?#]/.test(text)),
  ANY_TEXT.map(encodeURIComponent),
);

/** A forged cursor: base64url of any JSON, or not base64 at all. */
const cursor = fc.oneof(
  fc.json().map((json) => Buffer.from(json).toString("base64url")),
  fc
    .tuple(fc.integer({ min: -(2 ** 53), max: 2 ** 53 }), fc.double())
    .map((pair) => Buffer.from(JSON.stringify(pair)).toString("base64url")),
  ANY_ASCII.map(encodeURIComponent),
);

const query = fc.option(
  fc
    .array(
      fc.oneof(
        cursor.map((value) => `cursor=${value}`),
        fc.constantFrom("ready", "failed", "finished", "scheduled", "nonsense", "").map((state) => `state=${state}`),
        fc
          .constantFrom("from", "to", "queue", "name", "id", "notice", "n")
          .chain((key) => ANY_ASCII.map((value) => `${key}=${encodeURIComponent(value)}`)),
        fc.constantFrom("%", "%zz=1", "a=%E0%A4%A", "&&", "="),
      ),
      { maxLength: 3 },
    )
    .map((parts) => `?${parts.join("&")}`),
  { nil: "" },
);

/** A page or action the dashboard has, so that a fair share of cases gets past routing. */
const knownPath = fc.oneof(
  fc.constantFrom(
    "/",
    "/jobs",
    "/failed",
    "/processes",
    "/recurring",
    "/concurrency",
    "/rate-limits",
    "/batches",
    "/batches/1",
    "/metrics",
    "/jobs/lookup",
  ),
  fc.constantFrom("/assets/dashboard.js", "/failed/retry", "/failed/delete-all", "/queues/mail/pause"),
  fc
    .tuple(fc.constantFrom("/queues/", "/jobs/", "/recurring/", "/batches/"), segment)
    .map(([path, part]) => path + part),
  fc
    .tuple(fc.constantFrom("/jobs/", "/queues/"), segment, fc.constantFrom("/retry", "/delete", "/clear", "/resume"))
    .map((parts) => parts.join("")),
);

/** A path under the mount point (or beside it), with a query string. */
export function dashboardPath(prefix: string): fc.Arbitrary<string> {
  const path = fc.oneof(
    knownPath,
    fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join("/")}`),
  );
  return fc
    .tuple(fc.constantFrom(prefix, prefix, prefix, ""), path, query)
    .map(([base, rest, search]) => `${base}${rest}${search}`);
}

/** The request target of a request line: mostly a path, sometimes not one at all. */
export function requestTarget(prefix: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: dashboardPath(prefix) },
    {
      weight: 1,
      arbitrary: fc.constantFrom("*", "//", "///", "//?", "//@", "//evil.example/failed", "/\\evil.example"),
    },
    { weight: 1, arbitrary: fc.constantFrom("http://evil.example/", `http://127.0.0.1${prefix}/`, "", "?", "#", "%") },
    { weight: 1, arbitrary: ANY_ASCII },
  );
}

/** A Host header: a loopback name, a rebound page's name, a value that is not a host, or none. */
export function hostHeader(port: number): fc.Arbitrary<string | null> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(`127.0.0.1:${port}`, `localhost:${port}`, "[::1]", "127.1", "0x7f.1") },
    { weight: 2, arbitrary: fc.constantFrom(`attacker.example:${port}`, "jobs.example.com", "127.evil.example") },
    { weight: 2, arbitrary: fc.constantFrom(...BAD_HOSTS) },
    { weight: 1, arbitrary: ANY_ASCII },
    { weight: 1, arbitrary: fc.constant(null) },
  );
}

/** Extra headers: proxies', a browser's cross-site markers, credentials right or wrong, a form body's type. */
export function extraHeaders(authorization: string | null): fc.Arbitrary<Record<string, string>> {
  const pick = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
  return fc
    .record({
      authorization: fc.oneof(
        { weight: 3, arbitrary: fc.constant(authorization ?? undefined) },
        { weight: 1, arbitrary: pick(fc.constantFrom("Basic Og==", "Bearer x", "Basic %%%", "Basic", "Digest a=b")) },
      ),
      origin: pick(fc.constantFrom("null", "http://attacker.example", "http://127.0.0.1", "not a url", "http://[")),
      "sec-fetch-site": pick(fc.constantFrom("cross-site", "same-origin", "none", "")),
      cookie: pick(fc.constantFrom("firm_queue_csrf=", "firm_queue_csrf=a;firm_queue_csrf=b", "=;=;", "x".repeat(40))),
      "content-type": pick(fc.constantFrom("application/x-www-form-urlencoded", "text/plain", "multipart/form-data")),
      "x-forwarded-for": pick(fc.constant("203.0.113.7")),
      via: pick(fc.constant("1.1 proxy")),
    })
    .map((record) =>
      Object.fromEntries(Object.entries(record).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    );
}

/** A whole request as bytes: a request line that may be malformed, a Host, headers and a body. */
export function rawRequestBytes(prefix: string, port: number, authorization: string | null): fc.Arbitrary<string> {
  return fc
    .record({
      method: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom("GET", "HEAD", "POST") },
        { weight: 1, arbitrary: fc.constantFrom("PUT", "DELETE", "OPTIONS", "PATCH", "get", "G ET", "", "\u00e9") },
      ),
      target: requestTarget(prefix),
      version: fc.oneof(
        { weight: 6, arbitrary: fc.constant("HTTP/1.1") },
        { weight: 1, arbitrary: fc.constantFrom("HTTP/1.0", "HTTP/2", "HTTP/1.1 x", "", "HTTP/9.9", "http/1.1") },
      ),
      host: hostHeader(port),
      headers: extraHeaders(authorization),
      body: fc.option(fc.oneof(fc.constantFrom("_csrf=x&ids=1", "confirm=yes", "%", "ids=%E0%A4%A"), ANY_ASCII), {
        nil: "",
      }),
    })
    .map(({ method, target, version, host, headers, body }) => {
      const lines = [`${method} ${target} ${version}`.trimEnd()];
      if (host !== null) lines.push(`Host: ${host}`);
      for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
      lines.push(`Content-Length: ${Buffer.byteLength(body)}`, "Connection: close");
      return `${lines.join("\r\n")}\r\n\r\n${body}`;
    });
}
