import type { IncomingMessage, ServerResponse } from "node:http";
import { handleDashboardRequest, type CoreRequest } from "./dashboard.js";
import { resolveDashboardOptions, type DashboardOptions } from "./options.js";
import { PageError } from "./pages/page-error.js";

/** Largest form body accepted (a bulk retry of a full page of ids fits many times over). */
const MAX_FORM_BYTES = 256 * 1024;

/**
 * A Node `http` request handler (Express, Koa, Fastify's raw request, plain `http`). Its
 * parameters are Node's `IncomingMessage` and `ServerResponse`; they are declared as plain
 * objects so firm-queue's types need no `@types/node` in projects that do not use Node's types.
 */
export type NodeDashboardHandler = (request: object, response: object, next?: (error?: unknown) => void) => void;

/** A Fetch-API handler (Hono, Next.js route handlers, Bun, Deno). */
export type FetchDashboardHandler = (request: Request) => Promise<Response>;

/** The dashboard, as a handler for each kind of server. */
export interface Dashboard {
  /** For `http.createServer(handler)`, `app.use(prefix, handler)` in Express, and the like. */
  readonly node: NodeDashboardHandler;
  /** For frameworks that speak the Fetch API: `(request) => Promise<Response>`. */
  readonly fetch: FetchDashboardHandler;
}

/**
 * Build the dashboard for `options.firm`. Mount `node` or `fetch` under `options.basePath`.
 * Without authentication options the Node handler serves loopback connections only and the
 * Fetch handler (which cannot see the connection) refuses everything unless
 * `allowUnauthenticated` is set.
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  const resolved = resolveDashboardOptions(options);
  const node: NodeDashboardHandler = (nodeRequest, nodeResponse, next) => {
    const request = nodeRequest as IncomingMessage;
    const response = nodeResponse as ServerResponse;
    handleDashboardRequest(resolved, fromNode(request))
      .then((result) => {
        response.writeHead(result.status, result.headers);
        response.end(request.method === "HEAD" ? undefined : result.body);
      })
      .catch((error: unknown) => {
        if (next) return next(error);
        resolved.firm.options.logger.error("dashboard request failed", {
          error: error instanceof Error ? error.message : String(error),
        });
        if (!response.headersSent)
          response.writeHead(error instanceof PageError ? error.status : 500, {
            "content-type": "text/plain; charset=utf-8",
          });
        response.end(error instanceof PageError ? error.message : "Internal error");
      });
  };
  const fetchHandler: FetchDashboardHandler = async (request) => {
    try {
      const result = await handleDashboardRequest(resolved, fromFetch(request));
      return new Response(request.method === "HEAD" ? null : result.body, {
        status: result.status,
        headers: result.headers,
      });
    } catch (error) {
      if (error instanceof PageError)
        return new Response(error.message, {
          status: error.status,
          headers: { "content-type": "text/plain; charset=utf-8" },
        });
      throw error;
    }
  };
  return { node, fetch: fetchHandler };
}

function fromNode(request: IncomingMessage): CoreRequest {
  // Express strips its mount prefix from `url` and keeps the original in `originalUrl`.
  const path = (request as IncomingMessage & { originalUrl?: string }).originalUrl ?? request.url ?? "/";
  const secure = (request.socket as { encrypted?: boolean }).encrypted === true;
  const host = request.headers.host ?? "localhost";
  return {
    method: request.method ?? "GET",
    url: new URL(path, `${secure ? "https" : "http"}://${host}`).href,
    header: (name) => {
      const value = request.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(", ") : value;
    },
    raw: request,
    loopback: isLoopback(request.socket.localAddress) && isLoopback(request.socket.remoteAddress) && !proxied(request),
    readForm: () => readNodeForm(request),
  };
}

function fromFetch(request: Request): CoreRequest {
  return {
    method: request.method,
    url: request.url,
    header: (name) => request.headers.get(name) ?? undefined,
    raw: request,
    loopback: null,
    readForm: async () => {
      checkFormType(request.headers.get("content-type"));
      const text = await request.text();
      if (Buffer.byteLength(text) > MAX_FORM_BYTES) throw new PageError(413, "The form is too large.");
      return new URLSearchParams(text);
    },
  };
}

/**
 * Whether a proxy passed the request on: a reverse proxy on the same host connects over
 * loopback, but the request came from elsewhere, so it does not count as a local one.
 */
function proxied(request: IncomingMessage): boolean {
  return ["forwarded", "x-forwarded-for", "x-real-ip", "x-forwarded-host"].some(
    (name) => request.headers[name] !== undefined,
  );
}

/** Whether an address is a loopback one (IPv4 127/8, IPv6 ::1, or IPv4-mapped 127/8). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || /^(::ffff:)?127\./.test(address);
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

function checkFormType(type: string | null): void {
  if (!type?.toLowerCase().startsWith("application/x-www-form-urlencoded"))
    throw new PageError(415, "Expected a form (application/x-www-form-urlencoded).");
}
