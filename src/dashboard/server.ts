import { createServer } from "node:http";
import { ConfigurationError } from "../errors.js";
import { listenOn } from "../http-listen.js";
import { createDashboard } from "./adapters.js";
import { isLoopbackBindHost } from "./loopback.js";
import type { DashboardOptions } from "./options.js";
import { shown } from "../shown-value.js";

/** Options of `startDashboardServer`: the dashboard's, plus where to listen. */
export interface DashboardServerOptions extends DashboardOptions {
  /** Default 9000; 0 picks a free port. */
  readonly port?: number | undefined;
  /** Default "127.0.0.1". Anything but a loopback IP literal or `localhost` needs authentication. */
  readonly host?: string | undefined;
}

/** A running standalone dashboard. */
export interface DashboardServer {
  /** The address it listens on, e.g. `http://127.0.0.1:9000/`. */
  readonly url: string;
  /** Node's `http.Server` (typed loosely so firm-queue's types need no `@types/node`). */
  readonly server: object;
  close(): Promise<void>;
}

/**
 * Serve the dashboard on its own HTTP server. Refuses to listen on anything but a loopback IP
 * literal or `localhost` unless `basicAuth`, `bearerToken` or `authorize` is given: a queue's
 * jobs and its retry and delete buttons are not for the whole network.
 */
export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  const { port = 9000, host = "127.0.0.1", ...dashboardOptions } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigurationError(`dashboard port must be 0-65535, got ${shown(port)}`);
  const authenticated =
    dashboardOptions.basicAuth !== undefined ||
    dashboardOptions.bearerToken !== undefined ||
    dashboardOptions.authorize !== undefined;
  if (!authenticated && !isLoopbackBindHost(host)) {
    throw new ConfigurationError(
      `The dashboard will not listen on ${host} without authentication: set FIRM_QUEUE_DASHBOARD_USERNAME and FIRM_QUEUE_DASHBOARD_PASSWORD (or FIRM_QUEUE_DASHBOARD_TOKEN), or pass basicAuth, bearerToken or authorize`,
    );
  }
  const dashboard = createDashboard(dashboardOptions);
  const server = createServer(dashboard.node);
  const listening = await listenOn(server, port, host, `${dashboardOptions.basePath ?? ""}/`);
  return { url: listening.url, server, close: listening.close };
}
