import type { AddressInfo } from "node:net";
import express from "express";
import { Hono } from "hono";
import { expect, test } from "vitest";
import { createDashboard, type FirmQueue } from "../src/index.js";
import { csrfOf, postForm } from "./support/dashboard.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";

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

describeEachDatabase("dashboard mounted in a framework", (env) => {
  test("Express: app.use(prefix, dashboard.node) serves pages under the prefix and retries through a form", async () => {
    const firm = env.firm();
    const id = await failedJob(firm);
    const app = express();
    app.use("/admin/queues", createDashboard({ firm, basePath: "/admin/queues" }).node);
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
  });
});
