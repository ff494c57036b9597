import { expect, test } from "vitest";
import { ConfigurationError, createDashboard, dashboardAuthFromEnv, startDashboardServer } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";
import { csrfOf, postForm, serveUnderPrefix } from "./support/dashboard.js";

const XSS_ARGS = {
  html: "<img src=x onerror=alert(1)>",
  script: "</script><script>alert(2)</script>",
  quote: `"'><svg onload=alert(3)>`,
};

describeEachDatabase("dashboard over HTTP", (env) => {
  test("mounted under a prefix: pages render with security headers, everything untrusted escaped", async () => {
    const firm = env.firm();
    const job = firm.defineJob("<b>job</b>", async () => {
      throw new Error("<img src=x onerror=alert(4)>");
    });
    const id = (await job.enqueue(XSS_ARGS, { queue: "q<i>" })).id;
    await firm.drain();
    // A dependent and a batch of the same job: its name and arguments on the workflow pages too.
    const dependent = (await job.enqueue(XSS_ARGS, { queue: "q<i>", dependsOn: [id] })).id;
    const batch = await firm.batch([{ name: "<b>job</b>", args: XSS_ARGS, options: { queue: "q<i>" } }], {
      onFinish: { name: "<b>job</b>", args: XSS_ARGS },
    });
    const served = await serveUnderPrefix(createDashboard({ firm, basePath: "/admin/jobs" }), "/admin/jobs");
    try {
      expect(await (await fetch(`${served.url}/other`)).text()).toBe("the application");
      for (const path of [
        "",
        "/",
        "/jobs?state=failed",
        `/jobs/${id}`,
        "/failed",
        "/processes",
        "/recurring",
        "/concurrency",
        "/rate-limits",
        "/batches",
        `/batches/${batch.id}`,
        `/jobs/${dependent}`,
        `/jobs/${batch.jobs[0]!.id}`,
        `/queues/${encodeURIComponent("q<i>")}`,
      ]) {
        const response = await fetch(`${served.url}/admin/jobs${path}`);
        expect(response.status, path).toBe(200);
        const csp = response.headers.get("content-security-policy")!;
        expect(csp).toContain("script-src 'self'");
        expect(csp).not.toContain("unsafe-inline");
        expect(response.headers.get("x-frame-options")).toBe("DENY");
        const body = await response.text();
        expect(body).not.toMatch(/<img src=x|<script>alert|<svg onload|<b>job|<i>/);
        // Every script the page loads is the dashboard's own file; no inline script at all.
        expect([...body.matchAll(/<script\b[^>]*>/g)].map((match) => match[0])).toEqual([
          '<script src="/admin/jobs/assets/dashboard.js" defer>',
        ]);
        // No real tag carries an event handler or inline style (escaped text holds no "<").
        const tags = [...body.matchAll(/<[a-z][^>]*>/gi)].map((match) => match[0]);
        expect(tags.filter((tag) => /\s(on[a-z]+|style)\s*=/i.test(tag))).toEqual([]);
      }
      const detail = await (await fetch(`${served.url}/admin/jobs/jobs/${id}`)).text();
      expect(detail).toContain("&lt;img src=x onerror=alert(1)&gt;");
      expect(detail).toContain("&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;");
      expect(detail).toContain("&lt;b&gt;job&lt;/b&gt;");
      const css = await fetch(`${served.url}/admin/jobs/assets/dashboard.css`);
      expect(css.headers.get("content-type")).toContain("text/css");
      expect((await fetch(`${served.url}/admin/jobs/jobs/999999`)).status).toBe(404);
      expect((await fetch(`${served.url}/admin/jobs/jobs?state=nonsense`)).status).toBe(400);
      expect((await fetch(`${served.url}/admin/jobs/jobs?state=ready&cursor=bad`)).status).toBe(400);
      expect((await fetch(`${served.url}/admin/jobs/batches/999999`)).status).toBe(404);
      expect((await fetch(`${served.url}/admin/jobs/batches/x`)).status).toBe(400);
      expect((await fetch(`${served.url}/admin/jobs/batches?cursor=bad`)).status).toBe(400);
    } finally {
      await served.close();
    }
  });

  test("every mutation is a POST with a CSRF token bound to the cookie, from this origin", async () => {
    const firm = env.firm();
    const served = await serveUnderPrefix(createDashboard({ firm, basePath: "/q" }), "/q");
    try {
      const page = await fetch(`${served.url}/q/queues/mail`);
      const { cookie, token } = await csrfOf(page);
      const action = `${served.url}/q/queues/mail/pause`;
      // GET never changes anything.
      expect((await fetch(action)).status).toBe(404);
      expect((await postForm(action, {}, { cookie })).status).toBe(403);
      expect((await postForm(action, { _csrf: token })).status).toBe(403);
      expect((await postForm(action, { _csrf: `${token.slice(0, -2)}AA` }, { cookie })).status).toBe(403);
      expect((await postForm(action, { _csrf: token }, { cookie, origin: "http://evil.example" })).status).toBe(403);
      expect((await postForm(action, { _csrf: token }, { cookie, "sec-fetch-site": "cross-site" })).status).toBe(403);
      expect((await postForm(action, { _csrf: token }, { cookie, origin: "null" })).status).toBe(403);
      expect(
        (await postForm(action, { _csrf: token }, { cookie: "firm_queue_csrf=another-cookie-value-of-32-chars_" }))
          .status,
      ).toBe(403);
      expect(await firm.queues.list()).toEqual([]);

      const done = await postForm(action, { _csrf: token }, { cookie, origin: served.url });
      expect(done.status).toBe(303);
      expect(done.headers.get("location")).toBe("/q/queues/mail?notice=paused");
      expect(await firm.queues.list()).toEqual([expect.objectContaining({ name: "mail", paused: true })]);
      // Clearing needs its confirmation box.
      expect((await postForm(`${served.url}/q/queues/mail/clear`, { _csrf: token }, { cookie })).status).toBe(400);
      expect((await postForm(`${served.url}/q/queues/mail/resume`, { _csrf: token }, { cookie })).status).toBe(303);
      expect(await firm.queues.list()).toEqual([]);
    } finally {
      await served.close();
    }
  });

  test("read-only mode shows no forms and refuses every POST", async () => {
    const firm = env.firm();
    const job = firm.defineJob("boom", async () => {
      throw new Error("x");
    });
    const id = (await job.enqueue({})).id;
    await firm.drain();
    const served = await serveUnderPrefix(createDashboard({ firm, readOnly: true }), "");
    try {
      for (const path of ["/failed", `/jobs/${id}`, "/queues/default", "/recurring"]) {
        const body = await (await fetch(`${served.url}${path}`)).text();
        expect(body, path).not.toContain('<form method="post"');
        expect(body).toContain("read-only");
      }
      const response = await postForm(`${served.url}/jobs/${id}/retry`, { _csrf: "x" });
      expect(response.status).toBe(403);
      expect((await firm.getJob(id))!.state).toBe("failed");
    } finally {
      await served.close();
    }
  });

  test("authentication: basic credentials, bearer token and the authorize hook; the Fetch handler refuses without any", async () => {
    const firm = env.firm();
    const seen: string[] = [];
    const dashboard = createDashboard({
      firm,
      basicAuth: { username: "ops", password: "s3cret pass" },
      bearerToken: "token-0123456789abcdef",
      authorize: (request) => {
        seen.push(request.method);
        return request.header("x-blocked") === undefined;
      },
    });
    const served = await serveUnderPrefix(dashboard, "");
    try {
      const basic = (user: string, password: string) => ({
        authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`,
      });
      const refused = await fetch(`${served.url}/`);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toContain("Basic");
      expect((await fetch(`${served.url}/`, { headers: basic("ops", "wrong") })).status).toBe(401);
      expect((await fetch(`${served.url}/assets/dashboard.js`)).status).toBe(401);
      expect((await fetch(`${served.url}/`, { headers: basic("ops", "s3cret pass") })).status).toBe(200);
      expect(
        (await fetch(`${served.url}/`, { headers: { authorization: "Bearer token-0123456789abcdef" } })).status,
      ).toBe(200);
      expect(
        (await fetch(`${served.url}/`, { headers: { authorization: "Bearer token-0123456789abcdeX" } })).status,
      ).toBe(401);
      expect(
        (await fetch(`${served.url}/`, { headers: { ...basic("ops", "s3cret pass"), "x-blocked": "1" } })).status,
      ).toBe(403);
      expect(seen.length).toBeGreaterThanOrEqual(3);
    } finally {
      await served.close();
    }

    const open = createDashboard({ firm });
    // Without authentication the Node handler serves local requests only; a proxied one is not local.
    const local = await serveUnderPrefix(open, "");
    try {
      expect((await fetch(`${local.url}/`)).status).toBe(200);
      const proxied = await fetch(`${local.url}/`, { headers: { "x-forwarded-for": "203.0.113.7" } });
      expect(proxied.status).toBe(403);
      expect(await proxied.text()).toContain("only serves connections to a loopback address that no proxy forwarded");
      expect((await fetch(`${local.url}/`, { headers: { forwarded: "for=203.0.113.7" } })).status).toBe(403);
    } finally {
      await local.close();
    }
    const viaFetch = await open.fetch(new Request("http://dashboard.test/"));
    expect(viaFetch.status).toBe(403);
    const allowed = await createDashboard({
      firm,
      allowUnauthenticated: true,
      allowedHosts: ["dashboard.test"],
      basePath: "/jobs",
    }).fetch(new Request("http://dashboard.test/jobs/failed"));
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain("Failed jobs");
    const bearer = await createDashboard({ firm, bearerToken: "token-0123456789abcdef" }).fetch(
      new Request("http://dashboard.test/", { headers: { authorization: "Bearer token-0123456789abcdef" } }),
    );
    expect(bearer.status).toBe(200);
  });

  test("the standalone server refuses a non-loopback address without authentication; options are checked", async () => {
    const firm = env.firm();
    await expect(startDashboardServer({ firm, host: "0.0.0.0", port: 0 })).rejects.toThrow(
      /will not listen on 0\.0\.0\.0 without authentication/,
    );
    await expect(startDashboardServer({ firm, host: "::", port: 0 })).rejects.toThrow(ConfigurationError);
    // A name is not an address: whoever controls its DNS decides where it points.
    for (const host of ["127.evil.example", "127.0.0.1.nip.io", "localhost.evil.example"])
      await expect(startDashboardServer({ firm, host, port: 0 })).rejects.toThrow(
        `The dashboard will not listen on ${host} without authentication`,
      );
    for (const host of ["localhost", "127.0.0.2"]) {
      const loopback = await startDashboardServer({ firm, host, port: 0 });
      await loopback.close();
    }
    const server = await startDashboardServer({ firm, host: "127.0.0.1", port: 0 });
    try {
      expect((await fetch(server.url)).status).toBe(200);
      // A port in use: the error names the address.
      const port = Number(new URL(server.url).port);
      await expect(startDashboardServer({ firm, port })).rejects.toThrow(
        new ConfigurationError(
          `could not listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
        ),
      );
    } finally {
      await server.close();
    }
    expect(() => createDashboard({ firm, basePath: "no-slash<" })).toThrow(ConfigurationError);
    expect(() => createDashboard({ firm, bearerToken: "short" })).toThrow(/at least 16/);
    expect(() => createDashboard({ firm, colour: "red" } as never)).toThrow(/Unknown dashboard option "colour"/);
    expect(
      dashboardAuthFromEnv({
        FIRM_QUEUE_DASHBOARD_USERNAME: "a",
        FIRM_QUEUE_DASHBOARD_PASSWORD: "b",
        FIRM_QUEUE_DASHBOARD_TOKEN: "t",
      }),
    ).toEqual({ basicAuth: { username: "a", password: "b" }, bearerToken: "t" });
    expect(() => dashboardAuthFromEnv({ FIRM_QUEUE_DASHBOARD_USERNAME: "a" })).toThrow(ConfigurationError);
  });

  test("bulk retry and delete of failed jobs go through failedJobs; a running job is refused", async () => {
    const firm = env.firm();
    const job = firm.defineJob("flaky", async () => {
      throw new Error("down");
    });
    const ids = [
      (await job.enqueue({ n: 1 })).id,
      (await job.enqueue({ n: 2 })).id,
      (await job.enqueue({ n: 3 }, { queue: "other" })).id,
    ];
    await firm.drain({ queues: "*" });
    const served = await serveUnderPrefix(createDashboard({ firm }), "");
    try {
      const { cookie, token } = await csrfOf(await fetch(`${served.url}/failed`));
      const retried = await postForm(
        `${served.url}/failed/retry`,
        { _csrf: token, ids: [String(ids[0]), String(ids[1])] },
        { cookie },
      );
      expect(retried.headers.get("location")).toBe("/failed?notice=retried&n=2");
      expect((await firm.getJob(ids[0]!))!.state).toBe("ready");
      expect((await firm.getJob(ids[1]!))!.state).toBe("ready");
      // Retrying a job that is no longer failed is refused by failedJobs, and says why.
      const again = await postForm(`${served.url}/failed/retry`, { _csrf: token, only: String(ids[0]) }, { cookie });
      expect(again.status).toBe(409);
      expect(await again.text()).toContain("is ready, not failed");
      const deleted = await postForm(
        `${served.url}/failed/delete-all`,
        { _csrf: token, queue: "other", confirm: "yes" },
        { cookie },
      );
      expect(deleted.headers.get("location")).toBe("/failed?queue=other&notice=deleted&n=1");
      expect(await firm.getJob(ids[2]!)).toBeNull();
    } finally {
      await served.close();
    }
  });
});
