import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { ConfigurationError } from "../errors.js";
import { listenOn } from "../http-listen.js";
import type { FirmMetrics } from "./firm-metrics.js";
import type { HealthChecks } from "./health-checks.js";
import { shown } from "../shown-value.js";

/** What one observability server answers, and where it listens. */
export interface ObservabilityServerOptions {
  readonly port: number;
  /** Default "127.0.0.1". Use "0.0.0.0" for Prometheus or Kubernetes probes from outside the host. */
  readonly host?: string | undefined;
  /** Serve `/metrics` from these. */
  readonly metrics?: FirmMetrics | undefined;
  /** Serve `/livez` and `/readyz` from these. */
  readonly health?: HealthChecks | undefined;
}

/** A running observability server. */
export interface ObservabilityServer {
  /** e.g. `http://127.0.0.1:9464/`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serve `/metrics` (the Prometheus text format) and the `/livez` and `/readyz` probes (JSON,
 * 200 or 503) on a small HTTP server of their own, apart from any application server. It holds
 * no secrets and changes nothing, so it needs no authentication; keep it on loopback or a
 * network only the scraper and the orchestrator reach.
 */
export async function startObservabilityServer(options: ObservabilityServerOptions): Promise<ObservabilityServer> {
  const { port, host = "127.0.0.1", metrics, health } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigurationError(`metrics/health port must be 0-65535, got ${shown(port)}`);
  const server = createServer((request, response) => {
    void answer(request, response, metrics, health).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      response.end(`firm-queue: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  return listenOn(server, port, host);
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  metrics: FirmMetrics | undefined,
  health: HealthChecks | undefined,
): Promise<void> {
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  const head = request.method === "HEAD";
  if (request.method !== "GET" && !head) {
    response.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" });
    return void response.end("Method not allowed\n");
  }
  const send = (status: number, type: string, body: string) => {
    response.writeHead(status, { "content-type": type, "cache-control": "no-store" });
    response.end(head ? undefined : body);
  };
  if (path === "/metrics" && metrics) return send(200, metrics.contentType, await metrics.text());
  if ((path === "/livez" || path === "/readyz") && health) {
    const result = path === "/livez" ? health.liveness() : await health.readiness();
    return send(result.status, "application/json; charset=utf-8", `${JSON.stringify(result.body)}\n`);
  }
  const served = [...(metrics ? ["/metrics"] : []), ...(health ? ["/livez", "/readyz"] : [])];
  send(404, "text/plain; charset=utf-8", `Not found. This server answers ${served.join(", ")}.\n`);
}
