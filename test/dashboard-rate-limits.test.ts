import { expect, test } from "vitest";
import { createDashboard } from "../src/index.js";
import { serveUnderPrefix } from "./support/dashboard.js";
import { describeEachDatabase } from "./support/harness.js";

describeEachDatabase("dashboard: rate limits page", (env) => {
  test("lists each budget with its limit, period, use, jobs waiting and reopening, linked from the layout", async () => {
    const firm = env.firm();
    const job = firm.defineJob("send-mail", async () => {}, {
      rateLimit: { limit: 10, period: "1m", key: (args: { account: string }) => args.account },
    });
    await job.enqueueAll([{ account: "acme" }, { account: "acme" }, { account: "initech" }]);
    await firm.queues.setRateLimit("api", { limit: 5, period: "1s" });
    const served = await serveUnderPrefix(createDashboard({ firm, basePath: "/admin" }), "/admin");
    try {
      const overview = await (await fetch(`${served.url}/admin/`)).text();
      expect(overview).toContain('href="/admin/rate-limits"');
      const response = await fetch(`${served.url}/admin/rate-limits`);
      expect(response.status).toBe(200);
      const page = await response.text();
      const rows = [...page.matchAll(/<tr>\s*<th scope="row"[^>]*>([\s\S]*?)<\/tr>/g)].map((match) =>
        match[1]!
          .replace(/<[^>]+>/g, " ")
          .replace(/\s+/g, " ")
          .trim(),
      );
      expect(rows).toEqual([
        "job:send-mail/acme 10 1 min 0 2 has room",
        "job:send-mail/initech 10 1 min 0 1 has room",
        "queue:api 5 1 s 0 — has room",
      ]);
      expect(page).toContain('href="/admin/queues/api"');
    } finally {
      await served.close();
    }
    const empty = env.firm();
    const none = await serveUnderPrefix(createDashboard({ firm: empty, basePath: "/admin" }), "/admin");
    try {
      const db = await env.db();
      await db.deleteFrom("firm_queue_jobs").execute();
      await db.deleteFrom("firm_queue_rate_budgets").execute();
      expect(await (await fetch(`${none.url}/admin/rate-limits`)).text()).toContain("No rate limit is defined.");
    } finally {
      await none.close();
    }
  });
});
