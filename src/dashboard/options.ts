import { randomBytes } from "node:crypto";
import { toMilliseconds, type Duration } from "../duration.js";
import { ConfigurationError } from "../errors.js";
import type { FirmQueue } from "../firm-queue.js";
import { parseHost, type RequestHost } from "./host-check.js";
import { rejectUnknownKeys } from "../option-checks.js";
import { shown } from "../shown-value.js";

/** What the `authorize` hook sees of a request. */
export interface DashboardAuthRequest {
  readonly method: string;
  /** The full URL as the dashboard sees it. */
  readonly url: string;
  /** Request headers, names in lower case. */
  header(name: string): string | undefined;
  /** Node's `IncomingMessage` or the Fetch `Request`, as the handler received it. */
  readonly raw: unknown;
}

/** Options of `createDashboard`. */
export interface DashboardOptions {
  /** The FirmQueue whose database the dashboard shows and whose public operations it calls. */
  readonly firm: FirmQueue;
  /** Path prefix the dashboard is mounted under, e.g. "/admin/jobs". Default: "" (the root). */
  readonly basePath?: string | undefined;
  /** Hide every mutation and refuse every POST. Default false. */
  readonly readOnly?: boolean | undefined;
  /** Called for every request after any credentials check; return false to refuse it (403). */
  readonly authorize?: ((request: DashboardAuthRequest) => boolean | Promise<boolean>) | undefined;
  /** HTTP basic credentials the browser must send. */
  readonly basicAuth?: { readonly username: string; readonly password: string } | undefined;
  /** A token clients may send as `Authorization: Bearer <token>` (instead of basic credentials). */
  readonly bearerToken?: string | undefined;
  /**
   * Serve without any authentication on handlers that cannot see the connection (the Fetch
   * handler). The Node handler without authentication serves loopback connections only.
   */
  readonly allowUnauthenticated?: boolean | undefined;
  /**
   * The Host names (optionally with `:port`) the dashboard answers for; requests for any other
   * get 403. An entry without a port matches every port. Default: without authentication only
   * `localhost`, 127.0.0.0/8 and `[::1]`; with authentication any host. Set it to the names
   * users reach the dashboard by, e.g. `["jobs.example.com"]`.
   */
  readonly allowedHosts?: readonly string[] | undefined;
  /** How often pages refresh their figures. Default 5 s; 0 turns live refresh off. */
  readonly refreshInterval?: Duration | undefined;
  /** Heartbeat age after which a process is marked stale. Default 5 min (the supervisors' default). */
  readonly processAliveThreshold?: Duration | undefined;
  /**
   * Secret for CSRF tokens. Default: random per process, which is right for one process; give
   * every process the same secret when several serve the dashboard behind one address.
   */
  readonly csrfSecret?: string | undefined;
}

/** The options checked, defaults filled in. */
export interface ResolvedDashboardOptions {
  readonly firm: FirmQueue;
  readonly basePath: string;
  readonly readOnly: boolean;
  readonly authorize: ((request: DashboardAuthRequest) => boolean | Promise<boolean>) | null;
  readonly basicAuth: { readonly username: string; readonly password: string } | null;
  readonly bearerToken: string | null;
  readonly allowUnauthenticated: boolean;
  /** The hosts listed in `allowedHosts`, parsed; null when the option is not set. */
  readonly allowedHosts: readonly RequestHost[] | null;
  readonly refreshMs: number;
  readonly aliveThresholdMs: number;
  readonly csrfSecret: string;
}

const KEYS = new Set([
  "firm",
  "basePath",
  "readOnly",
  "authorize",
  "basicAuth",
  "bearerToken",
  "allowUnauthenticated",
  "allowedHosts",
  "refreshInterval",
  "processAliveThreshold",
  "csrfSecret",
]);

/** Check dashboard options; bad ones throw ConfigurationError naming the option. */
export function resolveDashboardOptions(options: DashboardOptions): ResolvedDashboardOptions {
  if (typeof options !== "object" || options === null)
    throw new ConfigurationError("createDashboard needs options such as { firm }");
  rejectUnknownKeys(options, KEYS, "dashboard option");
  const firm = options.firm as FirmQueue | undefined;
  if (!firm || typeof firm !== "object" || !("inspect" in firm))
    throw new ConfigurationError("dashboard option firm must be a FirmQueue");
  const basePath = (options.basePath ?? "").replace(/\/+$/, "");
  if (basePath !== "" && !/^\/[A-Za-z0-9._~\-/]*$/.test(basePath)) {
    throw new ConfigurationError(
      `dashboard option basePath must be a path such as "/admin/jobs", got ${shown(options.basePath)}`,
    );
  }
  if (options.authorize !== undefined && typeof options.authorize !== "function")
    throw new ConfigurationError("dashboard option authorize must be a function");
  const basic = options.basicAuth;
  if (
    basic !== undefined &&
    (typeof basic?.username !== "string" ||
      basic.username === "" ||
      basic.username.includes(":") ||
      typeof basic.password !== "string" ||
      basic.password === "")
  ) {
    throw new ConfigurationError(
      "dashboard option basicAuth needs a non-empty username (without ':') and a non-empty password",
    );
  }
  if (
    options.bearerToken !== undefined &&
    (typeof options.bearerToken !== "string" || options.bearerToken.length < 16)
  ) {
    throw new ConfigurationError("dashboard option bearerToken must be a string of at least 16 characters");
  }
  if (options.csrfSecret !== undefined && (typeof options.csrfSecret !== "string" || options.csrfSecret.length < 16)) {
    throw new ConfigurationError("dashboard option csrfSecret must be a string of at least 16 characters");
  }
  const allowedHosts = options.allowedHosts === undefined ? null : parseAllowedHosts(options.allowedHosts);
  const refreshMs =
    options.refreshInterval === 0
      ? 0
      : toMilliseconds(options.refreshInterval ?? 5000, "dashboard option refreshInterval");
  return {
    firm,
    basePath,
    readOnly: options.readOnly === true,
    authorize: options.authorize ?? null,
    basicAuth: basic ?? null,
    bearerToken: options.bearerToken ?? null,
    allowUnauthenticated: options.allowUnauthenticated === true,
    allowedHosts,
    refreshMs: refreshMs > 0 ? Math.max(1000, refreshMs) : 0,
    aliveThresholdMs: toMilliseconds(
      options.processAliveThreshold ?? 300_000,
      "dashboard option processAliveThreshold",
    ),
    csrfSecret: options.csrfSecret ?? randomBytes(32).toString("base64url"),
  };
}

function parseAllowedHosts(value: unknown): RequestHost[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new ConfigurationError(
      'dashboard option allowedHosts must be a non-empty array of host names such as ["jobs.example.com"]',
    );
  return value.map((entry: unknown) => {
    const host = typeof entry === "string" ? parseHost(entry) : null;
    if (!host)
      throw new ConfigurationError(
        `dashboard option allowedHosts: ${shown(entry)} is not a host name (optionally with :port), e.g. "jobs.example.com" or "10.0.0.5:9000"`,
      );
    return host;
  });
}

/** Whether any authentication is configured. */
export function hasAuthentication(options: ResolvedDashboardOptions): boolean {
  return options.authorize !== null || options.basicAuth !== null || options.bearerToken !== null;
}

/**
 * Credentials from the environment: `FIRM_QUEUE_DASHBOARD_USERNAME` with
 * `FIRM_QUEUE_DASHBOARD_PASSWORD` (basic), and `FIRM_QUEUE_DASHBOARD_TOKEN` (bearer). Spread the
 * result into the options: `createDashboard({ firm, ...dashboardAuthFromEnv() })`.
 */
export function dashboardAuthFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Pick<DashboardOptions, "basicAuth" | "bearerToken"> {
  const username = env.FIRM_QUEUE_DASHBOARD_USERNAME;
  const password = env.FIRM_QUEUE_DASHBOARD_PASSWORD;
  const token = env.FIRM_QUEUE_DASHBOARD_TOKEN;
  if ((username && !password) || (!username && password)) {
    throw new ConfigurationError(
      "Set both FIRM_QUEUE_DASHBOARD_USERNAME and FIRM_QUEUE_DASHBOARD_PASSWORD, or neither",
    );
  }
  return {
    ...(username && password ? { basicAuth: { username, password } } : {}),
    ...(token ? { bearerToken: token } : {}),
  };
}
