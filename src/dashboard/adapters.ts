import type { IncomingMessage, ServerResponse } from "node:http";
import type { CoreRequest, CoreResponse } from "./core-request.js";
import { handleDashboardRequest } from "./dashboard.js";
import { fromFetch } from "./fetch-request.js";
import { fromNode } from "./node-request.js";
import { resolveDashboardOptions, type DashboardOptions, type ResolvedDashboardOptions } from "./options.js";
import { PageError } from "./pages/page-error.js";
import { BAD_REQUEST, INTERNAL_ERROR, plainText } from "./plain-response.js";

/**
 * A Node `http` request handler (Express, Koa, Fastify's raw request, plain `http`). Its
 * parameters are Node's `IncomingMessage` and `ServerResponse`; they are declared as plain
 * objects so firm-queue's types need no `@types/node` in projects that do not use Node's types.
 * It answers every request itself and never calls `next`: an error handed to a framework would
 * reach its default error page (with a stack trace) before any authentication.
 */
export type NodeDashboardHandler = (request: object, response: object, next?: (error?: unknown) => void) => void;

/** A Fetch-API handler (Hono, Next.js route handlers, Bun, Deno). It always resolves, never rejects. */
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
 * `allowUnauthenticated` is set; both then answer only for loopback Host names (or `allowedHosts`).
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  const resolved = resolveDashboardOptions(options);
  const node: NodeDashboardHandler = (nodeRequest, nodeResponse) => {
    const request = nodeRequest as IncomingMessage;
    const response = nodeResponse as ServerResponse;
    answer(resolved, () => fromNode(request))
      .then((result) => sendNode(resolved, request, response, result))
      // Only a throwing logger gets here; the connection is dropped rather than the process.
      .catch(() => response.destroy());
  };
  const fetchHandler: FetchDashboardHandler = async (request) => {
    const result = await answer(resolved, () => fromFetch(request));
    return new Response(request.method === "HEAD" ? null : result.body, {
      status: result.status,
      headers: result.headers,
    });
  };
  return { node, fetch: fetchHandler };
}

/**
 * The response to one request, whatever happens: 400 when it cannot be parsed, the error page's
 * status for a PageError, 500 (logged, without details) for anything else. Never rejects.
 */
async function answer(options: ResolvedDashboardOptions, parse: () => CoreRequest | null): Promise<CoreResponse> {
  try {
    const request = parse();
    if (!request) return BAD_REQUEST;
    return await handleDashboardRequest(options, request);
  } catch (error) {
    if (error instanceof PageError) return plainText(error.status, error.message);
    logFailure(options, error);
    return INTERNAL_ERROR;
  }
}

function sendNode(
  options: ResolvedDashboardOptions,
  request: IncomingMessage,
  response: ServerResponse,
  result: CoreResponse,
): void {
  try {
    response.writeHead(result.status, result.headers);
    response.end(request.method === "HEAD" ? undefined : result.body);
  } catch (error) {
    // writeHead refuses a header value it cannot send; answer plainly rather than throw into the server.
    logFailure(options, error);
    if (!response.headersSent) response.writeHead(INTERNAL_ERROR.status, INTERNAL_ERROR.headers);
    response.end(INTERNAL_ERROR.body);
  }
}

function logFailure(options: ResolvedDashboardOptions, error: unknown): void {
  options.firm.options.logger.error("dashboard request failed", {
    error: error instanceof Error ? error.message : String(error),
  });
}
