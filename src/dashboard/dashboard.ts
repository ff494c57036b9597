import { href, type PageContext } from "./context.js";
import { runAction } from "./actions.js";
import { SCRIPT } from "./assets/script.js";
import { FAVICON, STYLESHEET } from "./assets/stylesheet.js";
import { html } from "./html.js";
import { layout } from "./layout.js";
import type { CoreRequest, CoreResponse } from "./core-request.js";
import { hostAllowed, type RequestHost } from "./host-check.js";
import { hasAuthentication, type ResolvedDashboardOptions } from "./options.js";
import { PageError } from "./pages/page-error.js";
import { plainText } from "./plain-response.js";
import { checkParams } from "./request-text.js";
import { renderPage } from "./router.js";
import {
  CSRF_COOKIE,
  csrfTokenFor,
  hasCredentials,
  isSameOriginPost,
  newCsrfCookie,
  readCookie,
  SECURITY_HEADERS,
} from "./security.js";

const ASSETS: Record<string, { type: string; body: string }> = {
  "/assets/dashboard.css": { type: "text/css; charset=utf-8", body: STYLESHEET },
  "/assets/dashboard.js": { type: "text/javascript; charset=utf-8", body: SCRIPT },
  "/assets/favicon.svg": { type: "image/svg+xml", body: FAVICON },
};

/**
 * Answer one request: authenticate, serve an asset, render a page, or run an action (POST,
 * CSRF-checked). Every response carries the security headers.
 */
export async function handleDashboardRequest(
  options: ResolvedDashboardOptions,
  request: CoreRequest,
): Promise<CoreResponse> {
  const url = new URL(request.url);
  const path = relativePath(url.pathname, options.basePath);
  const refused = await authenticate(options, request);
  if (refused) return refused;
  const method = request.method.toUpperCase();
  const asset = ASSETS[path];
  if (asset && (method === "GET" || method === "HEAD")) {
    return {
      status: 200,
      headers: { ...SECURITY_HEADERS, "content-type": asset.type, "cache-control": "private, max-age=300" },
      body: asset.body,
    };
  }
  if (path === "/metrics" && (method === "GET" || method === "HEAD")) {
    // Prometheus scrapes the dashboard's mount point too, behind the same authentication.
    const firm = options.firm;
    return {
      status: 200,
      headers: { ...SECURITY_HEADERS, "content-type": firm.metrics.contentType, "cache-control": "no-store" },
      body: await firm.metrics.text(),
    };
  }
  const existing = readCookie(request.header("cookie"), CSRF_COOKIE);
  const cookie = existing && /^[A-Za-z0-9_-]{32}$/.test(existing) ? existing : newCsrfCookie();
  const headers: Record<string, string> = { ...SECURITY_HEADERS };
  if (cookie !== existing) {
    const secure = url.protocol === "https:" || request.header("x-forwarded-proto") === "https" ? "; Secure" : "";
    headers["set-cookie"] =
      `${CSRF_COOKIE}=${cookie}; Path=${options.basePath || "/"}; HttpOnly; SameSite=Strict${secure}`;
  }
  const context: PageContext = {
    firm: options.firm,
    base: options.basePath,
    readOnly: options.readOnly,
    csrfToken: csrfTokenFor(options.csrfSecret, cookie),
    refreshMs: options.refreshMs,
    aliveThresholdMs: options.aliveThresholdMs,
    replication: method === "GET" || method === "HEAD" ? await options.firm.inspect.replication() : null,
    now: new Date(),
    query: url.searchParams,
  };
  try {
    checkParams(url.searchParams);
    if (method === "GET" || method === "HEAD") {
      if (path === "/jobs/lookup")
        return redirect(
          headers,
          href(context, `/jobs/${encodeURIComponent(url.searchParams.get("id")?.trim() ?? "")}`),
        );
      const page = await renderPage(context, path);
      if (!page) throw new PageError(404, "There is no such page.");
      return {
        status: 200,
        headers: { ...headers, "content-type": "text/html; charset=utf-8" },
        body: layout(context, page),
      };
    }
    if (method !== "POST")
      return {
        status: 405,
        headers: { ...headers, allow: "GET, HEAD, POST", "content-type": "text/plain; charset=utf-8" },
        body: "Method not allowed",
      };
    if (options.readOnly) throw new PageError(403, "This dashboard is read-only.");
    const form = checkParams(await request.readForm());
    if (!isSameOriginPost(request, options.csrfSecret, form.get("_csrf"))) {
      throw new PageError(
        403,
        "The form's security token is missing or stale, or the request came from another site. Reload the page and try again.",
      );
    }
    const done = await runAction(context, path, form);
    if (!done) throw new PageError(404, "There is no such action.");
    return redirect(headers, done.location);
  } catch (error) {
    const status = error instanceof PageError ? error.status : 500;
    if (!(error instanceof PageError))
      options.firm.options.logger.error("dashboard request failed", {
        path,
        error: error instanceof Error ? error.message : String(error),
      });
    const message =
      error instanceof PageError
        ? error.message
        : "Something went wrong while reading the queue; the error is in the server's log.";
    const body = layout(context, {
      title: status === 404 ? "Not found" : status === 403 ? "Refused" : "Could not do that",
      section: "",
      body: html`<p class="notice error" role="alert">${message}</p><p><a href="${href(context, "/")}">Back to the overview</a></p>`,
    });
    return { status, headers: { ...headers, "content-type": "text/html; charset=utf-8" }, body };
  }
}

/** The path below the mount point: frameworks that strip the prefix hand it over already stripped. */
function relativePath(pathname: string, base: string): string {
  if (base !== "" && (pathname === base || pathname.startsWith(`${base}/`))) pathname = pathname.slice(base.length);
  return pathname === "" ? "/" : pathname;
}

/**
 * Refuse a request sent to a host the dashboard does not answer for (403). Without
 * authentication that is any host but loopback: a page that rebinds its own name to 127.0.0.1
 * reaches the dashboard through the browser, but with its own name in Host.
 */
function checkHost(options: ResolvedDashboardOptions, host: RequestHost): CoreResponse | null {
  if (hostAllowed(host, options.allowedHosts, hasAuthentication(options))) return null;
  return plainText(
    403,
    options.allowedHosts
      ? `firm-queue dashboard: ${host.host} is not in allowedHosts.`
      : `firm-queue dashboard: without authentication it only answers requests for localhost, 127.0.0.1 or [::1], not ${host.host}. Configure basicAuth, bearerToken or authorize, or list the names it is reached by in allowedHosts.`,
  );
}

/**
 * Refuse what may not see the dashboard: without authentication a connection that is not local
 * (or a Fetch request without allowUnauthenticated), then a host it does not answer for; with
 * authentication a host it does not answer for, then missing credentials, then `authorize`.
 */
async function authenticate(options: ResolvedDashboardOptions, request: CoreRequest): Promise<CoreResponse | null> {
  if (!hasAuthentication(options)) {
    if (request.loopback === true || (request.loopback === null && options.allowUnauthenticated))
      return checkHost(options, request.host);
    return plainText(
      403,
      request.loopback === false
        ? "firm-queue dashboard: without authentication it only serves connections to a loopback address that no proxy forwarded. Configure basicAuth, bearerToken or authorize."
        : "firm-queue dashboard: configure basicAuth, bearerToken or authorize (or allowUnauthenticated: true behind your own access control).",
    );
  }
  const wrongHost = checkHost(options, request.host);
  if (wrongHost) return wrongHost;
  if (!hasCredentials(request, options)) {
    return plainText(
      401,
      "Authentication required.",
      options.basicAuth ? { "www-authenticate": 'Basic realm="firm-queue", charset="UTF-8"' } : {},
    );
  }
  if (options.authorize && !(await options.authorize(request))) return plainText(403, "Not allowed.");
  return null;
}

function redirect(headers: Record<string, string>, location: string): CoreResponse {
  return {
    status: 303,
    headers: { ...headers, location, "content-type": "text/plain; charset=utf-8" },
    body: `See ${location}`,
  };
}
