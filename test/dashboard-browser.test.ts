import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startDashboardServer, type DashboardServer, type FirmQueue } from "../src/index.js";
import { browserAvailable, launchChromium } from "./support/browser.js";
import { describeEachDatabase, enqueued, TestEnv, waitFor } from "./support/harness.js";
import { testDialects } from "./support/test-database.js";

const SCREENSHOTS = fileURLToPath(new URL("../docs/dashboard/", import.meta.url));
const run = browserAvailable();

// A browser on a shared, busy machine: generous timeouts; every wait is for a condition.
(run ? describe : describe.skip)("dashboard in Chromium", { timeout: 90_000 }, () => {
  let browser: BrowserContext;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  /** Script the page ran that it should not have: dialogs, and the marker the payloads set. */
  const alarms: string[] = [];

  beforeAll(async () => {
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await browser.newPage();
    page.on("dialog", (dialog) => {
      alarms.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on("pageerror", (error) => alarms.push(`page error: ${error.message}`));
  }, 60_000);
  afterAll(async () => closeBrowser?.());

  describeEachDatabase("dashboard in a browser", (env) => {
    let server: DashboardServer | undefined;
    const open = async (firm: FirmQueue, options: { refreshInterval?: number } = {}) => {
      await server?.close();
      server = await startDashboardServer({ firm, port: 0, refreshInterval: options.refreshInterval ?? 0 });
      return server.url.replace(/\/$/, "");
    };
    afterAll(async () => server?.close());

    test("every page renders; jobs filter and page with the cursor; lookup by id", async () => {
      const firm = env.firm();
      const email = firm.defineJob("email", async () => {});
      const ids: number[] = [];
      for (let index = 0; index < 55; index += 1)
        ids.push((await email.enqueue({ index }, { queue: index % 5 === 0 ? "mail" : "bulk" })).id);
      const base = await open(firm);
      for (const [path, heading] of [
        ["/", "Overview"],
        ["/jobs", "Jobs"],
        ["/failed", "Failed jobs"],
        ["/processes", "Processes"],
        ["/recurring", "Recurring tasks"],
        ["/concurrency", "Concurrency"],
        ["/rate-limits", "Rate limits"],
        ["/queues/mail", "Queue mail"],
        [`/jobs/${ids[0]}`, `Job #${ids[0]}`],
      ] as const) {
        await page.goto(base + path);
        expect(await page.locator("h1").textContent(), path).toBe(heading);
      }
      await firm.queues.setRateLimit("mail", { limit: 20, period: "1m" });
      await page.goto(`${base}/`);
      await page.click("nav >> text=Rate limits");
      expect(await page.locator("h1").textContent()).toBe("Rate limits");
      expect((await page.locator("#rate-limits tbody tr").textContent())?.replace(/\s+/g, " ").trim()).toBe(
        "queue:mail 20 1 min 0 11 has room",
      );
      await firm.queues.clearRateLimit("mail");
      await page.goto(`${base}/`);
      expect(await page.locator("#totals .total-ready .figure").textContent()).toBe("55");
      await page.click("table.queues >> text=mail");
      expect(await page.locator("h1").textContent()).toBe("Queue mail");
      expect(await page.locator("table.jobs tbody tr").count()).toBe(11);

      await page.goto(`${base}/jobs?state=ready`);
      expect(await page.locator("table.jobs tbody tr").count()).toBe(50);
      expect(await page.locator("table.jobs tbody tr").first().locator("a").first().textContent()).toBe(`#${ids[54]}`);
      await page.click("a[rel=next]");
      expect(await page.locator("table.jobs tbody tr").count()).toBe(5);
      expect(await page.locator("table.jobs tbody tr").last().locator("a").first().textContent()).toBe(`#${ids[0]}`);
      expect(await page.locator("a[rel=next]").count()).toBe(0);

      await page.fill("form.filters input[name=queue]", "mail");
      await page.click("form.filters button[type=submit]");
      expect(new URL(page.url()).searchParams.get("queue")).toBe("mail");
      expect(await page.locator("table.jobs tbody tr").count()).toBe(11);

      await page.fill("form.lookup input[name=id]", String(ids[7]));
      await page.click("form.lookup button");
      expect(await page.locator("h1").textContent()).toBe(`Job #${ids[7]}`);
      expect(await page.locator("pre.args").textContent()).toContain('"index": 7');
    });

    test("workflows: Batches from the navigation, a batch's progress and jobs, a job's dependency and batch links", async () => {
      const firm = env.firm();
      firm.defineJob("resize", async (args: { photo: number }) => {
        if (args.photo === 2) throw new Error("unreadable");
      });
      firm.defineJob("publish", async () => {});
      const batch = await firm.batch(
        [1, 2, 3, 4].map((photo) => ({ name: "resize", args: { photo } })),
        { onFinish: { name: "publish", args: { album: "summer" } } },
      );
      const [first, second] = batch.jobs.map((job) => job.id!);
      const publish = (
        await firm.enqueue("publish", { album: "winter" }, { dependsOn: [first!, second!], onDependencyFailure: "run" })
      ).id!;
      await firm.drain({ queues: "*" });
      const base = await open(firm);
      await page.goto(`${base}/`);
      await page.click("nav >> text=Batches");
      expect(await page.locator("h1").textContent()).toBe("Batches");
      const row = page.locator("table.batches tbody tr").first();
      expect((await row.textContent())?.replace(/\s+/g, " ")).toContain(`#${batch.id} failed`);
      expect(await row.locator("svg.progress-bar").getAttribute("aria-label")).toBe(
        "4 of 4 ended: 3 finished, 1 failed, 0 cancelled",
      );
      await row.locator(`a[href="/batches/${batch.id}"]`).click();
      expect(await page.locator("h1").textContent()).toBe(`Batch #${batch.id}`);
      expect(await page.locator("figcaption.progress-caption").textContent()).toContain("4 of 4 jobs ended (100%).");
      expect(await page.locator("table.callbacks tbody").textContent()).toContain("publish");
      expect(await page.locator("table.batch-jobs tbody tr").count()).toBe(4);
      // A bar of the chart's colours, drawn: the finished part is wider than the failed one.
      const finishedBox = await page.locator("figure.chart svg .bar-finished").boundingBox();
      const failedBox = await page.locator("figure.chart svg .bar-failed").boundingBox();
      expect(finishedBox!.width).toBeGreaterThan(failedBox!.width * 2);

      await page.click(`table.batch-jobs a[href="/jobs/${second}"]`);
      expect(await page.locator("h1").textContent()).toBe(`Job #${second}`);
      expect(await page.locator(".facts").textContent()).toContain(`Batch#${batch.id}`);
      const dependents = page.locator("#job-dependents li");
      expect((await dependents.textContent())?.replace(/\s+/g, " ")).toBe(`#${publish} publish finished`);
      await dependents.locator("a").click();
      expect(await page.locator("h1").textContent()).toBe(`Job #${publish}`);
      expect(
        (await page.locator("#job-dependencies li").allTextContents()).map((text) => text.replace(/\s+/g, " ")),
      ).toEqual([`#${first} resize finished`, `#${second} resize failed`]);
      await page.click(`#job-dependencies a[href="/jobs/${first}"]`);
      expect(await page.locator("h1").textContent()).toBe(`Job #${first}`);
      await page.click(`.facts a[href="/batches/${batch.id}"]`);
      expect(await page.locator("h1").textContent()).toBe(`Batch #${batch.id}`);
    });

    test("failed jobs: retry one, delete the selected ones, retry all matching", async () => {
      const firm = env.firm();
      const flaky = firm.defineJob("flaky", async () => {
        throw new RangeError("upstream down");
      });
      const ids = [
        (await flaky.enqueue({ n: 1 })).id,
        (await flaky.enqueue({ n: 2 })).id,
        (await flaky.enqueue({ n: 3 })).id,
        (await flaky.enqueue({ n: 4 }, { queue: "other" })).id,
      ];
      await firm.drain();
      const base = await open(firm);
      await page.goto(`${base}/failed`);
      expect(await page.locator("table.jobs tbody tr").count()).toBe(4);
      expect(await page.locator("table.jobs").textContent()).toContain("RangeError");

      await page.locator(`button[name=only][value="${ids[0]}"]`, { hasText: "Retry" }).click();
      expect(await page.locator(".notice").textContent()).toBe("Jobs retried: 1");
      expect((await firm.getJob(ids[0]!))!.state).toBe("ready");

      await page.check(`input[name=ids][value="${ids[1]}"]`);
      await page.check(`input[name=ids][value="${ids[2]}"]`);
      await page.click("text=Delete selected");
      expect(await page.locator(".notice").textContent()).toBe("Jobs deleted: 2");
      expect(await firm.getJob(ids[1]!)).toBeNull();
      expect(await firm.getJob(ids[2]!)).toBeNull();

      await page.goto(`${base}/jobs/${ids[3]}`);
      await page.click("button:text-is('Retry')");
      expect(await page.locator(".notice").textContent()).toBe("Jobs retried: 1");
      expect((await firm.getJob(ids[3]!))!.state).toBe("ready");
      await firm.drain();
      await page.goto(`${base}/failed?queue=other`);
      await page.click("text=/Retry all 1 matching/");
      expect(await page.locator(".notice").textContent()).toBe("Jobs retried: 1");
      expect(page.url()).toContain("queue=other");
      expect((await firm.getJob(ids[3]!))!.state).toBe("ready");
    });

    test("pause and resume a queue; clearing asks for confirmation", async () => {
      const firm = env.firm();
      const job = firm.defineJob("work", async () => {});
      await job.enqueue({}, { queue: "reports" });
      await job.enqueue({}, { queue: "reports" });
      const base = await open(firm);
      await page.goto(`${base}/queues/reports`);
      await page.click("text=Pause queue");
      expect(await page.locator(".notice").textContent()).toBe("Queue paused.");
      expect(await firm.queues.list()).toEqual([expect.objectContaining({ name: "reports", paused: true })]);
      await page.click("text=Resume queue");
      expect((await firm.queues.list())[0]!.paused).toBe(false);

      // The browser will not submit the clear form until its box is ticked.
      await page.click("text=Clear ready jobs");
      expect(page.url()).toBe(`${base}/queues/reports?notice=resumed`);
      expect((await firm.queues.list())[0]!.size).toBe(2);
      await page.check("form.clear input[name=confirm]");
      await page.click("text=Clear ready jobs");
      expect(await page.locator(".notice").textContent()).toBe("Ready jobs cleared: 2");
      expect(await firm.queues.list()).toEqual([]);
    });

    test("run a recurring task now, and see its run", async () => {
      const firm = env.firm();
      firm.defineJob("report", async () => {});
      await firm.recurring.schedule("nightly-report", { job: "report", schedule: "0 3 * * *", args: { scope: "all" } });
      const base = await open(firm);
      await page.goto(`${base}/recurring`);
      expect(await page.locator("table.recurring").textContent()).toContain("every day at 03:00");
      await page.click("text=Run now");
      const notice = await page.locator(".notice").textContent();
      const jobId = Number(/#(\d+)/.exec(notice ?? "")?.[1]);
      expect(await firm.getJob(jobId)).toMatchObject({ name: "report", state: "ready", arguments: { scope: "all" } });
      expect(await page.locator(`ul.runs a[href="/jobs/${jobId}"]`).count()).toBe(1);
    });

    test("a running job appears under its process without a reload (live refresh)", async () => {
      const firm = env.firm();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow = firm.defineJob("slow", async () => gate);
      const supervisor = await firm.start({ workers: [{ pollingInterval: 50 }], dispatchers: [] });
      try {
        const base = await open(firm, { refreshInterval: 1000 });
        await page.goto(`${base}/processes`);
        await page.locator("table.processes td", { hasText: "Worker" }).first().waitFor();
        const id = (await slow.enqueue({})).id;
        await page.locator(`#processes a[href="/jobs/${id}"]`).waitFor({ timeout: 20_000 });
        await page.goto(`${base}/jobs/${id}`);
        expect(await page.locator(".facts").textContent()).toContain("Running on");
      } finally {
        release();
        await supervisor.stop();
      }
    });

    test("untrusted names, arguments and errors cannot run script; forms from another origin are refused", async () => {
      const firm = env.firm();
      const payload = `<img src=x onerror="window.__xss=1;alert(1)">`;
      const evil = firm.defineJob(`x<img src=x onerror="window.__xss=2">`, async () => {
        throw new Error(`</script><script>window.__xss=3;alert(3)</script>`);
      });
      const id = (
        await evil.enqueue(
          { payload, close: "</script><script>alert(4)</script>", attr: `"><svg onload=alert(5)>` },
          { queue: "q<b>" },
        )
      ).id;
      await firm.drain({ queues: "*" });
      await firm.recurring.schedule(`t<img src=x onerror=alert(6)>`, {
        job: `x<img src=x onerror="window.__xss=2">`,
        schedule: "@hourly",
        args: { payload },
      });
      const base = await open(firm, { refreshInterval: 1000 });
      alarms.length = 0;
      const pages = [
        "/",
        "/failed",
        `/jobs/${id}`,
        "/jobs?state=failed",
        `/queues/${encodeURIComponent("q<b>")}`,
        "/recurring",
      ];
      for (const path of pages) {
        await page.goto(base + path);
        // On two pages also wait for a live refresh, which swaps fetched markup into the page.
        // (Browser-side code as strings: the test's TypeScript has no DOM types.)
        if (path === "/failed" || path === "/recurring") {
          await page.evaluate(
            `new Promise((resolve, reject) => { document.addEventListener("firm-queue:refreshed", resolve, { once: true }); setTimeout(() => reject(new Error("no live refresh within 20 s")), 20000); })`,
          );
        }
        expect(await page.evaluate("window.__xss ?? null"), path).toBeNull();
        expect(await page.locator("main img, main svg[onload], main script").count(), path).toBe(0);
      }
      expect(await page.locator("pre.args").count()).toBe(0);
      await page.goto(`${base}/jobs/${id}`);
      expect(await page.locator("pre.args").textContent()).toContain(JSON.stringify(payload));
      expect(await page.locator(".error-message").first().textContent()).toBe(
        "</script><script>window.__xss=3;alert(3)</script>",
      );
      expect(alarms).toEqual([]);

      // Another origin (another port) serves a page that posts to the dashboard on load.
      const attacker = createServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/html" });
        response.end(
          `<form id=f method=post action="${base}/queues/mail/pause"><input name=_csrf value=guess></form><script>document.getElementById("f").submit()</script>`,
        );
      });
      await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
      try {
        const response = page.waitForResponse((candidate) => candidate.url().endsWith("/queues/mail/pause"));
        await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
        expect((await response).status()).toBe(403);
        expect(await firm.queues.list()).toEqual([]);
      } finally {
        await new Promise((resolve) => {
          attacker.close(resolve);
          attacker.closeAllConnections();
        });
      }
    });
  });

  // Pictures for the README: one database is enough (the first under test).
  describe("screenshots", () => {
    const env = new TestEnv(testDialects()[0]!);
    beforeAll(() => env.setup());
    afterAll(async () => {
      await env.reset();
      await env.teardown();
    });

    test("screenshots of the main pages, light and dark (written to docs/dashboard/)", async () => {
      const firm = env.firm();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const started: number[] = [];
      firm.defineJob("ImportCatalog", async (_args, job) => {
        started.push(job.jobId);
        await gate;
      });
      await showcase(env, firm);
      const importId = (
        await firm.enqueue("ImportCatalog", { supplier: "north-wind", rows: 125_000 }, { queue: "imports" })
      ).id;
      const supervisor = await firm.start({ workers: [{ queues: "imports", pollingInterval: 50 }], dispatchers: [] });
      await waitFor(() => started.includes(importId!), 15_000, "the import to start");
      const server = await startDashboardServer({ firm, port: 0, refreshInterval: 0 });
      const base = server.url.replace(/\/$/, "");
      mkdirSync(SCREENSHOTS, { recursive: true });
      const failed = (await firm.inspect.jobs({ state: "failed", limit: 1 })).jobs[0]!;
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const [name, path] of [
          ["overview", "/"],
          ["failed", "/failed"],
          ["job", `/jobs/${failed.id}`],
          ["processes", "/processes"],
          ["recurring", "/recurring"],
        ] as const) {
          await page.goto(base + path);
          await page.screenshot({ path: `${SCREENSHOTS}${name}-${scheme}.png`, fullPage: true });
        }
      }
      await page.emulateMedia({ colorScheme: "light" });
      release();
      await supervisor.stop();
      await server.close();
    });
  });
});

/** A small, varied queue worth a picture: finished and failed work, backlog, a worker, a recurring task. */
async function showcase(env: TestEnv, firm: FirmQueue): Promise<void> {
  const send = firm.defineJob("SendInvoiceEmail", async () => {});
  const sync = firm.defineJob("SyncAccount", async (_args: { account: string }) => {}, {
    concurrency: { key: (args) => args.account, to: 1 },
  });
  const charge = firm.defineJob("ChargeCard", async () => {
    throw new Error("card_declined: insufficient funds");
  });
  firm.defineJob("NightlyReport", async () => {});
  for (let index = 0; index < 60; index += 1)
    await send.enqueue({ invoice: 1000 + index, to: `customer${index}@example.com` }, { queue: "mailers" });
  await firm.drain({ concurrency: 4 });
  // Spread the finishes over the last hour, so the throughput chart has a shape.
  const db = await env.db();
  const finished = await db.selectFrom("firm_queue_jobs").select("id").where("finished_at", "is not", null).execute();
  for (const [index, row] of finished.entries()) {
    const minutesAgo = Math.floor(((index * 37) % 55) + (index % 3));
    await db
      .updateTable("firm_queue_jobs")
      .set({ finished_at: new Date(Date.now() - minutesAgo * 60_000) })
      .where("id", "=", row.id)
      .execute();
  }
  for (let index = 0; index < 3; index += 1)
    await charge.enqueue(
      { customer: `cus_${index}`, amount: 4200n + BigInt(index), at: new Date("2026-12-01T09:00:00Z") },
      { queue: "billing" },
    );
  await firm.drain();
  for (let index = 0; index < 6; index += 1) await send.enqueue({ invoice: 2000 + index }, { queue: "mailers" });
  await send.enqueue({ invoice: 3000 }, { queue: "mailers", wait: "2h" });
  await enqueued(sync.enqueue({ account: "acme" }));
  await enqueued(sync.enqueue({ account: "acme" }));
  await firm.queues.pause("billing");
  await firm.recurring.schedule("nightly-report", {
    job: "NightlyReport",
    schedule: "0 3 * * *",
    description: "Totals for finance",
  });
  await firm.recurring.runNow("nightly-report");
}
