import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Dashboard } from "../../src/index.js";

/** A plain `http` server that hands `prefix` to the dashboard's Node handler and answers everything else itself. */
export async function serveUnderPrefix(
  dashboard: Dashboard,
  prefix: string,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.url === prefix || request.url?.startsWith(`${prefix}/`) || request.url?.startsWith(`${prefix}?`))
      return dashboard.node(request, response);
    response.writeHead(200, { "content-type": "text/plain" }).end("the application");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The CSRF cookie and form token a page hands out. */
export async function csrfOf(response: Response): Promise<{ cookie: string; token: string; body: string }> {
  const body = await response.text();
  const cookie = /firm_queue_csrf=([^;]+)/.exec(response.headers.get("set-cookie") ?? "")?.[1];
  const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
  if (!cookie || !token) throw new Error("the page set no CSRF cookie or carried no token");
  return { cookie: `firm_queue_csrf=${cookie}`, token, body };
}

/** POST a form the way a browser does. */
export function postForm(
  url: string,
  fields: Record<string, string | string[]>,
  headers: Record<string, string> = {},
): Promise<Response> {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(fields))
    for (const item of Array.isArray(value) ? value : [value]) form.append(key, item);
  return fetch(url, {
    method: "POST",
    body: form,
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    redirect: "manual",
  });
}
