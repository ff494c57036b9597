import type { IncomingMessage } from "node:http";
import type { CoreRequest } from "./core-request.js";
import { parseHost } from "./host-check.js";
import { isLoopbackAddress } from "./loopback.js";
import { PageError } from "./pages/page-error.js";
import { checkFormType, MAX_FORM_BYTES } from "./request-form.js";

/**
 * Headers a proxy adds when it passes a request on. A reverse proxy on the same host connects
 * over loopback, but its requests come from elsewhere, so any of these makes a request non-local.
 * A proxy that adds none of them and rewrites Host to the loopback address it forwards to cannot
 * be told from a local client: docs/dashboard.md ("Security model") says so.
 */
const PROXY_HEADERS = [
  "forwarded",
  "via",
  "x-real-ip",
  "x-client-ip",
  "true-client-ip",
  "cf-connecting-ip",
  "fastly-client-ip",
  "x-cluster-client-ip",
  "x-original-forwarded-for",
];

/**
 * The dashboard's view of a Node request, or null when it cannot be parsed (a Host that is not
 * a host, a request target that is not a path): the adapter answers those 400 without looking further.
 */
export function fromNode(request: IncomingMessage): CoreRequest | null {
  // Express strips its mount prefix from `url` and keeps the original in `originalUrl`.
  const target = (request as IncomingMessage & { originalUrl?: string }).originalUrl ?? request.url ?? "";
  const host = parseHost(request.headers.host);
  // Only a path (origin-form) is accepted: "http://other/x" or "*" would name another resource.
  if (!host || !target.startsWith("/")) return null;
  const secure = (request.socket as { encrypted?: boolean }).encrypted === true;
  let url: string;
  try {
    // The host is checked above, so the target cannot change it ("//evil.example/" stays a path).
    url = new URL(`${secure ? "https" : "http"}://${host.host}${target}`).href;
  } catch {
    return null;
  }
  return {
    method: request.method ?? "GET",
    url,
    host,
    header: (name) => {
      const value = request.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(", ") : value;
    },
    raw: request,
    loopback:
      isLoopbackAddress(request.socket.localAddress) &&
      isLoopbackAddress(request.socket.remoteAddress) &&
      !proxied(request),
    readForm: () => readNodeForm(request),
  };
}

/** Whether a proxy passed the request on (see {@link PROXY_HEADERS}; every `X-Forwarded-*` counts too). */
function proxied(request: IncomingMessage): boolean {
  return Object.keys(request.headers).some((name) => name.startsWith("x-forwarded-") || PROXY_HEADERS.includes(name));
}

async function readNodeForm(request: IncomingMessage): Promise<URLSearchParams> {
  // A framework may have parsed the body already (express.urlencoded()): use what it read.
  const parsed = (request as IncomingMessage & { body?: unknown }).body;
  if (parsed && typeof parsed === "object" && !Buffer.isBuffer(parsed)) {
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
      for (const item of Array.isArray(value) ? value : [value]) form.append(key, String(item));
    }
    return form;
  }
  checkFormType(request.headers["content-type"] ?? null);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new PageError(413, "The form is too large.");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}
