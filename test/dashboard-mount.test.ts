import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { expect, test } from "vitest";
import { createDashboard, dashboardAuthFromEnv, type FirmQueue } from "../src/index.js";
import { csrfOf, postForm } from "./support/dashboard.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { BAD_HOSTS, bodyOf, leaksInternals, rawRequest } from "./support/raw-http.js";

/** A failed job to look at and retry through the mounted dashboard. */
async function failedJob(firm: FirmQueue): Promise<number> {
  let fail = true;
  firm.defineJob("flaky", async () => {
    if (fail) throw new Error("first time");
  });
  const id = await enqueued(firm.enqueue("flaky", {}));
  await firm.drain();
  fail = false;
  return id;
}

/**
 * Through a dashboard mounted at `${base}/admin/jobs` (the application answering everything
 * else): a page renders with its links under the prefix, a forged cross-origin POST is refused,
 * and retrying failed job `id` through the page's form with its CSRF token works.
 */
async function operateUnderPrefix(
  firm: FirmQueue,
  base: string,
  id: number,
  headers: Record<string, string> = {},
): Promise<void> {
  expect(await (await fetch(`${base}/`)).text()).toBe("the application");
  // Only the prefix as a whole path segment goes to the dashboard.
  expect(await (await fetch(`${base}/admin/jobsite`)).text()).toBe("the application");
  const page = await fetch(`${base}/admin/jobs/failed?queue=default`, { headers });
  expect(page.status).toBe(200);
  const { cookie, token, body } = await csrfOf(page);
  expect(body).toContain(`href="/admin/jobs/jobs/${id}"`);
  expect(body).toContain(`action="/admin/jobs/failed/retry"`);
  const forged = await postForm(
    `${base}/admin/jobs/failed/retry`,
    { _csrf: token, ids: String(id) },
    { ...headers, cookie, origin: "http://evil.example" },
  );
  expect(forged.status).toBe(403);
  expect((await firm.getJob(id))?.state).toBe("failed");
  const retried = await postForm(
    `${base}/admin/jobs/failed/retry`,
    { _csrf: token, ids: String(id) },
    { ...headers, cookie, origin: base },
  );
  expect(retried.status).toBe(303);
  expect(retried.headers.get("location")).toMatch(/^\/admin\/jobs\/failed/);
  expect((await firm.getJob(id))?.state).toBe("ready");
}

/**
 * Through a framework on `port` with the dashboard under /admin/jobs: a Host that is not one and
 * a bad percent-escape get the dashboard's own 400 (not the framework's error page, with or
 * without a stack trace), a rebound page's Host gets 403, and the application still answers.
 */
async function refusesHostileRequests(port: number, headers: Record<string, string> = {}): Promise<void> {
  for (const host of BAD_HOSTS) {
    const answer = await rawRequest(port, { target: "/admin/jobs/failed", host, headers });
    expect(answer.status, `Host ${JSON.stringify(host)}`).toBe(400);
    expect(bodyOf(answer)).toContain("Bad request.");
  }
  const badEscape = await rawRequest(port, { target: "/admin/jobs/queues/%E0%A4%A", headers });
  expect(badEscape.status).toBe(400);
  expect(leaksInternals(badEscape.text)).toBe(false);
  const rebound = await rawRequest(port, { target: "/admin/jobs/failed", host: `attacker.example:${port}`, headers });
  expect(rebound.status).toBe(headers.authorization ? 200 : 403);
  expect(bodyOf(await rawRequest(port, { target: "/" }))).toContain("the application");
}

describeEachDatabase("dashboard mounted in a framework", (env) => {
  test("Express: app.use(prefix, dashboard.node) serves pages under the prefix and retries through a form", async () => {
    const firm = env.firm();
    const id = await failedJob(firm);
    const app = express();
    app.use("/admin/queues", createDashboard({ firm, basePath: "/admin/queues" }).node);
    app.use("/admin/jobs", createDashboard({ firm, basePath: "/admin/jobs" }).node);
    const failing = () => {
      throw new Error("the hook failed");
    };
    app.use("/admin/broken", createDashboard({ firm, basePath: "/admin/broken", authorize: failing }).node);
    app.get("/", (_request, response) => {
      response.send("the application");
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await (await fetch(`${base}/`)).text()).toBe("the application");
      const page = await fetch(`${base}/admin/queues/failed`);
      expect(page.status).toBe(200);
      const { cookie, token, body } = await csrfOf(page);
      // Links and the form point under the prefix Express stripped.
      expect(body).toContain(`href="/admin/queues/jobs/${id}"`);
      const retried = await postForm(
        `${base}/admin/queues/failed/retry`,
        { _csrf: token, ids: String(id) },
        { cookie, origin: base },
      );
      expect(retried.status).toBe(303);
      expect((await firm.getJob(id))?.state).toBe("ready");
      await refusesHostileRequests(Number(new URL(base).port));
      // A failure is the dashboard's own plain 500, not Express's error page with the stack.
      const broken = await rawRequest(Number(new URL(base).port), { target: "/admin/broken/" });
      expect(broken.status).toBe(500);
      expect(bodyOf(broken)).toContain("Internal error");
      expect(broken.text).not.toContain("the hook failed");
      expect(leaksInternals(broken.text)).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test("Hono: the Fetch handler under a route serves pages and refuses an unauthenticated POST", async () => {
    const firm = env.firm();
    const id = await failedJob(firm);
    const dashboard = createDashboard({ firm, basePath: "/jobs", allowUnauthenticated: true });
    const app = new Hono();
    app.all("/jobs/*", (context) => dashboard.fetch(context.req.raw));
    app.all("/jobs", (context) => dashboard.fetch(context.req.raw));
    const page = await app.request(`http://localhost/jobs/jobs/${id}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("flaky");
    const forged = await app.request("http://localhost/jobs/failed/retry", {
      method: "POST",
      body: new URLSearchParams({ ids: String(id) }),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://evil.test" },
    });
    expect(forged.status).toBe(403);
    expect((await firm.getJob(id))?.state).toBe("failed");
    // The runtime parsed the URL; a Host header it passed on that is not a host is a 400, a rebound one a 403.
    for (const host of BAD_HOSTS) {
      const answer = await app.request("http://localhost/jobs/failed", { headers: { host } });
      expect(answer.status, `Host ${JSON.stringify(host)}`).toBe(400);
    }
    expect((await app.request("http://localhost/jobs/failed", { headers: { host: "attacker.example" } })).status).toBe(
      403,
    );
    expect((await app.request("http://attacker.example/jobs/failed")).status).toBe(403);
    const badEscape = await app.request("http://localhost/jobs/queues/%E0%A4%A");
    expect(badEscape.status).toBe(400);
  });

  // The mounting code below is the one docs/dashboard.md shows for Fastify.
  test("Fastify: an onRequest hook hands the raw request over under the prefix; pages, a form retry, a forged POST refused", async () => {
    const firm = env.firm();
    const id = await failedJob(firm);
    const fastify = Fastify();
    const environment = { FIRM_QUEUE_DASHBOARD_USERNAME: "ops", FIRM_QUEUE_DASHBOARD_PASSWORD: "a long password" };
    const dashboard = createDashboard({ firm, basePath: "/admin/jobs", ...dashboardAuthFromEnv(environment) });
    fastify.addHook("onRequest", (request, reply, done) => {
      if (
        request.url !== "/admin/jobs" &&
        !request.url.startsWith("/admin/jobs/") &&
        !request.url.startsWith("/admin/jobs?")
      )
        return done();
      reply.hijack();
      dashboard.node(request.raw, reply.raw);
    });
    fastify.get("/", async () => "the application");
    fastify.get("/admin/jobsite", async () => "the application");
    await fastify.listen({ port: 0, host: "127.0.0.1" });
    try {
      const base = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;
      // The credentials reach the dashboard through Fastify's raw request.
      expect((await fetch(`${base}/admin/jobs/failed`)).status).toBe(401);
      const authorization = `Basic ${Buffer.from("ops:a long password").toString("base64")}`;
      await operateUnderPrefix(firm, base, id, { authorization });
      // With credentials any Host is answered (allowedHosts is not set here).
      await refusesHostileRequests(Number(new URL(base).port), { authorization });
    } finally {
      await fastify.close();
    }
  });

  // The mounting code below is the one docs/dashboard.md shows for Koa.
  test("Koa: a middleware hands ctx.req and ctx.res over under the prefix; pages, a form retry, a forged POST refused", async () => {
    const firm = env.firm();
    const id = await failedJob(firm);
    const app = new Koa();
    const dashboard = createDashboard({ firm, basePath: "/admin/jobs" });
    app.use(async (ctx, next) => {
      if (ctx.path !== "/admin/jobs" && !ctx.path.startsWith("/admin/jobs/")) return next();
      ctx.respond = false;
      dashboard.node(ctx.req, ctx.res);
    });
    app.use((ctx) => {
      ctx.body = "the application";
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      await operateUnderPrefix(firm, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, id);
      await refusesHostileRequests((server.address() as AddressInfo).port);
    } finally {
      await new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      });
    }
  });
});
