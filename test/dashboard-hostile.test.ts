import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "vitest";
import {
  ConfigurationError,
  createDashboard,
  type Dashboard,
  InvalidCursorError,
  startDashboardServer,
} from "../src/index.js";
import { csrfOf, serveUnderPrefix } from "./support/dashboard.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { BAD_HOSTS, bodyOf, leaksInternals, rawRequest } from "./support/raw-http.js";
import { capturingLogger } from "./support/recurring.js";

/** Targets that crashed `new URL(target, base)` or would name another host or resource. */
const ODD_TARGETS = ["//", "///", "//?", "//@", "//evil.example/failed", "/\\evil.example/"];
const NOT_PATHS = ["*", "http://evil.example/failed"];

/** The dashboard at the root of a plain `http` server whose application answers `/app` itself. */
async function mountedAtRoot(dashboard: Dashboard): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.url === "/app") return void response.end("the application");
    dashboard.node(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const portOf = (url: string) => Number(new URL(url).port);

describeEachDatabase("dashboard against hostile requests", (env) => {
  test("a request it cannot parse gets 400 before authentication; the host application and the server live on", async () => {
    const firm = env.firm();
    const basic = `Basic ${Buffer.from("ops:a long password").toString("base64")}`;
    const mount = await mountedAtRoot(createDashboard({ firm }));
    const servers = [
      { name: "plain http mount", port: mount.port, close: mount.close, ok: 200 },
      ...(await Promise.all(
        [
          { name: "standalone", options: {}, ok: 200 },
          {
            name: "standalone with basic auth",
            options: { basicAuth: { username: "ops", password: "a long password" } },
            ok: 401,
          },
          { name: "standalone read-only", options: { readOnly: true }, ok: 200 },
        ].map(async ({ name, options, ok }) => {
          const server = await startDashboardServer({ firm, port: 0, ...options });
          return { name, port: portOf(server.url), close: server.close, ok };
        }),
      )),
    ];
    try {
      for (const server of servers) {
        for (const host of BAD_HOSTS) {
          const answer = await rawRequest(server.port, { target: "/failed", host });
          expect(answer.status, `${server.name}, Host ${JSON.stringify(host)}`).toBe(400);
          expect(bodyOf(answer)).toContain("Bad request.");
        }
        for (const target of NOT_PATHS)
          expect((await rawRequest(server.port, { target })).status, `${server.name}, ${target}`).toBe(400);
        for (const target of ODD_TARGETS) {
          const answer = await rawRequest(server.port, { target });
          expect(answer.status, `${server.name}, ${target}`).toBeGreaterThanOrEqual(400);
          expect(answer.status, `${server.name}, ${target}`).toBeLessThan(500);
          expect(leaksInternals(answer.text)).toBe(false);
        }
        // Still serving, and (with authentication) still asking for it.
        expect((await rawRequest(server.port, { target: "/" })).status, server.name).toBe(server.ok);
        const authorized = await rawRequest(server.port, { target: "/", headers: { authorization: basic } });
        expect(authorized.status).toBe(200);
      }
      expect(bodyOf(await rawRequest(mount.port, { target: "/app" }))).toContain("the application");
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  test("DNS rebinding: without authentication only loopback Host names are answered, so a rebound page reads and changes nothing", async () => {
    const firm = env.firm();
    const job = firm.defineJob("secret", async () => {
      throw new Error("the secret error");
    });
    const id = await enqueued(job.enqueue({ password: "hunter2" }));
    await firm.drain();
    const mount = await mountedAtRoot(createDashboard({ firm }));
    const standalone = await startDashboardServer({ firm, port: 0 });
    try {
      for (const port of [mount.port, portOf(standalone.url)]) {
        const attacker = `attacker.example:${port}`;
        for (const target of ["/", "/failed", `/jobs/${id}`, "/assets/dashboard.js", "/metrics"]) {
          const answer = await rawRequest(port, { target, host: attacker });
          expect(answer.status, target).toBe(403);
          expect(answer.text).not.toContain("hunter2");
          expect(bodyOf(answer)).toContain("only answers requests for localhost, 127.0.0.1 or [::1]");
        }
        // The page's own CSRF pair and Origin, as the rebound page would send them.
        const page = await fetch(`http://127.0.0.1:${port}/queues/mail`);
        const { cookie, token } = await csrfOf(page);
        const form = `_csrf=${encodeURIComponent(token)}`;
        const headers = { cookie, "content-type": "application/x-www-form-urlencoded" };
        const forged = await rawRequest(port, {
          method: "POST",
          target: "/queues/mail/pause",
          host: attacker,
          headers: { ...headers, origin: `http://${attacker}` },
          body: form,
        });
        expect(forged.status).toBe(403);
        expect(await firm.queues.list()).toEqual([]);
        for (const host of ["localhost.attacker.example", "127.0.0.1.attacker.example", "127.evil.example", "0.0.0.0"])
          expect((await rawRequest(port, { target: "/", host })).status, host).toBe(403);
        for (const host of [
          `localhost:${port}`,
          "LOCALHOST",
          `127.0.0.1:${port}`,
          "127.1.2.3",
          `[::1]:${port}`,
          "[::1]",
        ])
          expect((await rawRequest(port, { target: "/", host })).status, host).toBe(200);
        // The same POST from the loopback name goes through.
        const done = await rawRequest(port, {
          method: "POST",
          target: "/queues/mail/pause",
          host: `localhost:${port}`,
          headers: { ...headers, origin: `http://localhost:${port}` },
          body: form,
        });
        expect(done.status).toBe(303);
        await firm.queues.resume("mail");
      }
    } finally {
      await mount.close();
      await standalone.close();
    }
    // The Fetch handler cannot see the connection; allowUnauthenticated still keeps to loopback names.
    const open = createDashboard({ firm, allowUnauthenticated: true });
    expect((await open.fetch(new Request("http://localhost/failed"))).status).toBe(200);
    expect((await open.fetch(new Request("http://dashboard.test/failed"))).status).toBe(403);
    const spoofed = new Request("http://localhost/failed", { headers: { host: "attacker.example" } });
    expect((await open.fetch(spoofed)).status).toBe(403);
    const listed = createDashboard({ firm, allowUnauthenticated: true, allowedHosts: ["dashboard.test"] });
    expect((await listed.fetch(new Request("http://dashboard.test/failed"))).status).toBe(200);
    expect((await listed.fetch(new Request("http://localhost/failed"))).status).toBe(403);
  });

  test("with authentication, allowedHosts lists the hosts it answers for; the option is checked", async () => {
    const firm = env.firm();
    const token = "token-0123456789abcdef";
    const authorization = `Bearer ${token}`;
    const mount = await mountedAtRoot(
      createDashboard({ firm, bearerToken: token, allowedHosts: ["jobs.example", "10.0.0.5:9000"] }),
    );
    try {
      const status = async (host: string, headers: Record<string, string> = { authorization }) =>
        (await rawRequest(mount.port, { target: "/failed", host, headers })).status;
      expect(await status("jobs.example")).toBe(200);
      expect(await status("JOBS.example:8443")).toBe(200);
      expect(await status("10.0.0.5:9000")).toBe(200);
      expect(await status("10.0.0.5:9001")).toBe(403);
      expect(await status(`127.0.0.1:${mount.port}`)).toBe(403);
      expect(await status("attacker.example")).toBe(403);
      // A host it does not answer for is refused before credentials are asked for.
      expect(await status("attacker.example", {})).toBe(403);
      expect(await status("jobs.example", {})).toBe(401);
      const page = await rawRequest(mount.port, {
        target: "/queues/mail",
        host: "jobs.example",
        headers: { authorization },
      });
      const cookie = /firm_queue_csrf=[^;]+/.exec(page.text)![0];
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
      const post = (origin: string) =>
        rawRequest(mount.port, {
          method: "POST",
          target: "/queues/mail/pause",
          host: "jobs.example",
          headers: { authorization, cookie, origin, "content-type": "application/x-www-form-urlencoded" },
          body: `_csrf=${encodeURIComponent(csrf)}`,
        });
      expect((await post("http://10.0.0.5:9000")).status).toBe(403);
      expect((await post("http://attacker.example")).status).toBe(403);
      expect(await firm.queues.list()).toEqual([]);
      expect((await post("https://jobs.example")).status).toBe(303);
    } finally {
      await mount.close();
    }
    // Without allowedHosts an authenticated dashboard answers for any host (credentials guard it).
    const anyHost = createDashboard({ firm, bearerToken: token });
    const response = await anyHost.fetch(new Request("http://jobs.internal/", { headers: { authorization } }));
    expect(response.status).toBe(200);

    for (const allowedHosts of ["jobs.example", [], [""], ["a b"], ["jobs.example/x"], ["x:99999"], [5]]) {
      expect(() => createDashboard({ firm, allowedHosts } as never), JSON.stringify(allowedHosts)).toThrow(
        ConfigurationError,
      );
    }
    expect(() => createDashboard({ firm, allowedHosts: ["ok.example", "a b"] })).toThrow(
      /dashboard option allowedHosts: "a b" is not a host name/,
    );
    await expect(startDashboardServer({ firm, port: 0, allowedHosts: [] })).rejects.toThrow(/allowedHosts/);
  });

  test("a proxy in front is not a local client: any proxy header, or the public Host it passes on, is refused", async () => {
    const firm = env.firm();
    const served = await serveUnderPrefix(createDashboard({ firm }), "");
    const port = portOf(served.url);
    try {
      for (const [name, value] of [
        ["Forwarded", "for=203.0.113.7"],
        ["X-Forwarded-For", "203.0.113.7"],
        ["X-Real-IP", "203.0.113.7"],
        ["X-Forwarded-Host", "jobs.example.com"],
        ["Via", "1.1 proxy"],
        ["X-Forwarded-Proto", "https"],
        ["X-Forwarded-Port", "443"],
        ["X-Client-IP", "203.0.113.7"],
        ["True-Client-IP", "203.0.113.7"],
        ["CF-Connecting-IP", "203.0.113.7"],
      ] as const) {
        const answer = await rawRequest(port, { target: "/", headers: { [name]: value } });
        expect(answer.status, name).toBe(403);
        expect(bodyOf(answer)).toContain("only serves connections to a loopback address that no proxy forwarded");
      }
      // A proxy that adds no header but passes the public name on (nginx: proxy_set_header Host $host).
      expect((await rawRequest(port, { target: "/", host: "jobs.example.com" })).status).toBe(403);
      expect((await rawRequest(port, { target: "/" })).status).toBe(200);
    } finally {
      await served.close();
    }
  });

  test("a bad percent-escape or a NUL is a 400 page and no error in the log; a forged cursor is InvalidCursorError, 400", async () => {
    const logger = capturingLogger();
    const firm = env.firm({ logger });
    const served = await serveUnderPrefix(createDashboard({ firm, basePath: "/q" }), "/q");
    const port = portOf(served.url);
    try {
      for (const target of ["/q/queues/%", "/q/queues/%zz", "/q/jobs/%E0%A4%A", "/q/queues/%C3", "/q/batches/%zz"]) {
        const answer = await rawRequest(port, { target });
        expect(answer.status, target).toBe(400);
        expect(answer.text).toContain("malformed percent-escape");
      }
      const { cookie, token } = await csrfOf(await fetch(`${served.url}/q/queues/mail`));
      for (const target of ["/q/queues/%/pause", "/q/recurring/%E0%A4%A/run"]) {
        const answer = await rawRequest(port, {
          method: "POST",
          target,
          headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
          body: `_csrf=${encodeURIComponent(token)}`,
        });
        expect(answer.status, target).toBe(400);
      }
      // NUL: PostgreSQL text cannot hold it, so it would fail there as a database error (found by the fuzz).
      for (const target of [
        "/q/queues/%00",
        "/q/jobs?state=failed&queue=%00",
        "/q/failed?name=a%00b",
        "/q/jobs/1%00",
        "/q/batches/%00",
        "/q/batches?cursor=%00",
      ]) {
        const answer = await rawRequest(port, { target });
        expect(answer.status, target).toBe(400);
      }
      for (const [target, body] of [
        ["/q/recurring/%00/run", ""],
        ["/q/failed/retry-all", "&queue=%00"],
        ["/q/failed/delete-all", "&confirm=yes&name=x%00"],
      ] as const) {
        const answer = await rawRequest(port, {
          method: "POST",
          target,
          headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
          body: `_csrf=${encodeURIComponent(token)}${body}`,
        });
        expect(answer.status, target).toBe(400);
        expect(answer.text).toContain("NUL character");
      }
      // [1, 9007199254740991]: a safe integer, but no Date holds that time.
      const forged = "WzEsOTAwNzE5OTI1NDc0MDk5MV0";
      for (const state of ["finished", "failed", "ready"]) {
        const answer = await fetch(`${served.url}/q/jobs?state=${state}&cursor=${forged}`);
        expect(answer.status, state).toBe(400);
        expect(await answer.text()).toContain("Not a job listing cursor");
      }
      // The batch listings take the same cursors, and refuse a forged one alike.
      for (const path of ["/q/batches", "/q/batches/1"]) {
        const answer = await fetch(`${served.url}${path}?cursor=${forged}`);
        expect(answer.status, path).toBe(400);
        expect(await answer.text()).toContain("Not a job listing cursor");
      }
      await expect(firm.inspect.jobs({ state: "finished", cursor: forged })).rejects.toThrow(InvalidCursorError);
      const negative = Buffer.from("[1,-9007199254740991]").toString("base64url");
      await expect(firm.inspect.jobs({ state: "finished", cursor: negative })).rejects.toThrow(InvalidCursorError);
      const edge = Buffer.from("[1,8640000000000000]").toString("base64url");
      await expect(firm.inspect.jobs({ state: "finished", cursor: edge })).resolves.toEqual({
        jobs: [],
        nextCursor: null,
      });
      expect(logger.lines.filter((line) => line.level !== "debug")).toEqual([]);
    } finally {
      await served.close();
    }
  });

  test("a failure inside the dashboard is a plain 500 from both handlers: logged, nothing thrown, no detail sent", async () => {
    const logger = capturingLogger();
    const firm = env.firm({ logger });
    const dashboard = createDashboard({
      firm,
      authorize: () => {
        throw new Error("hook failed at /srv/app/auth.ts:12");
      },
    });
    const viaFetch = await dashboard.fetch(new Request("http://localhost/failed"));
    expect(viaFetch.status).toBe(500);
    expect(await viaFetch.text()).not.toContain("hook failed");
    const mount = await mountedAtRoot(dashboard);
    try {
      const answer = await rawRequest(mount.port, { target: "/failed" });
      expect(answer.status).toBe(500);
      expect(answer.text).not.toMatch(/hook failed|auth\.ts/);
      expect(bodyOf(await rawRequest(mount.port, { target: "/app" }))).toContain("the application");
    } finally {
      await mount.close();
    }
    expect(logger.lines.filter((line) => line.level === "error")).toEqual([
      expect.objectContaining({ message: "dashboard request failed" }),
      expect.objectContaining({ message: "dashboard request failed" }),
    ]);
    // A Host the Fetch handler cannot parse.
    const bad = await dashboard.fetch(new Request("http://localhost/", { headers: { host: "a b" } }));
    expect(bad.status).toBe(400);
  });
});
