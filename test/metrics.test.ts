import { expect, it } from "vitest";
import { Counter, Registry } from "prom-client";
import { createDashboard } from "../src/index.js";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { parseScrape } from "./support/prometheus-text.js";

describeEachDatabase("metrics", (env) => {
  it("exposes jobs by queue and state, the oldest ready job's age, pauses and live processes as gauges", async () => {
    const firm = env.firm();
    firm.metrics.configure({ gaugeInterval: 0 });
    firm.defineJob("mail", async () => undefined, { queue: "outbox" });
    firm.defineJob("report", async () => undefined, { queue: "reports" });
    await firm.enqueue("mail", { to: 1 });
    await firm.enqueue("mail", { to: 2 });
    await firm.enqueue("mail", { to: 3 });
    await firm.enqueue("report", {}, { wait: "1h" });
    await firm.queues.pause("reports");
    const before = parseScrape(await firm.metrics.text());
    expect(before.types.get("firm_queue_jobs")).toBe("gauge");
    expect(before.value("firm_queue_jobs", { queue: "outbox", state: "ready" })).toBe(3);
    expect(before.value("firm_queue_jobs", { queue: "outbox", state: "scheduled" })).toBe(0);
    expect(before.value("firm_queue_jobs", { queue: "reports", state: "scheduled" })).toBe(1);
    expect(before.value("firm_queue_queue_paused", { queue: "reports" })).toBe(1);
    expect(before.value("firm_queue_queue_paused", { queue: "outbox" })).toBe(0);
    expect(before.value("firm_queue_oldest_ready_job_age_seconds", { queue: "outbox" })).toBeGreaterThanOrEqual(0);
    expect(before.value("firm_queue_oldest_ready_job_age_seconds", { queue: "reports" })).toBe(0);
    expect(before.value("firm_queue_database_up")).toBe(1);
    expect(before.value("firm_queue_processes", { kind: "Worker" })).toBe(0);

    const supervisor = await firm.start({
      workers: [{ queues: "outbox", concurrency: 2, pollingInterval: "50ms" }],
      dispatchers: [],
      processHeartbeatInterval: "1s",
    });
    await waitFor(
      async () => (await firm.inspect.queues()).every((queue) => queue.ready + queue.claimed === 0),
      20_000,
      "jobs run",
    );
    const after = parseScrape(await firm.metrics.text());
    // A queue with nothing left unfinished is no longer listed.
    expect(after.value("firm_queue_jobs", { queue: "outbox", state: "ready" })).toBeUndefined();
    expect(after.value("firm_queue_processes", { kind: "Supervisor" })).toBe(1);
    expect(after.value("firm_queue_processes", { kind: "Worker" })).toBe(1);
    expect(after.value("firm_queue_stale_processes", { kind: "Worker" })).toBe(0);
    await supervisor.stop();
  });

  it("reads the gauges from the database at most once per gaugeInterval, however often scraped", async () => {
    const firm = env.firm();
    firm.metrics.configure({ gaugeInterval: "1h" });
    firm.defineJob("mail", async () => undefined);
    await firm.enqueue("mail", {});
    const first = parseScrape(await firm.metrics.text());
    expect(first.value("firm_queue_jobs", { queue: "default", state: "ready" })).toBe(1);
    await firm.enqueue("mail", {});
    const cached = await Promise.all([firm.metrics.text(), firm.metrics.text()]);
    for (const text of cached)
      expect(parseScrape(text).value("firm_queue_jobs", { queue: "default", state: "ready" })).toBe(1);
    firm.metrics.configure({ gaugeInterval: 0 });
    const fresh = parseScrape(await firm.metrics.text());
    expect(fresh.value("firm_queue_jobs", { queue: "default", state: "ready" })).toBe(2);
  });

  it("gives a prom-client registry that merges into the application's own", async () => {
    const firm = env.firm();
    firm.metrics.configure({ gaugeInterval: 0 });
    firm.defineJob("mail", async () => undefined, { queue: "outbox" });
    await firm.enqueue("mail", {});
    const mine = new Registry();
    new Counter({ name: "app_requests_total", help: "Requests.", registers: [mine] }).inc(7);
    const merged = Registry.merge([mine, (await firm.metrics.registry()) as unknown as Registry]);
    const scrape = parseScrape(await merged.metrics());
    expect(scrape.value("app_requests_total")).toBe(7);
    expect(scrape.value("firm_queue_jobs", { queue: "outbox", state: "ready" })).toBe(1);
    expect(scrape.types.get("firm_queue_job_run_seconds")).toBe("histogram");
    const own = new Registry();
    firm.metrics.registerInto(own);
    expect(parseScrape(await own.metrics()).value("firm_queue_database_up")).toBe(1);
  });

  it("serves the same text at the dashboard's /metrics, behind the dashboard's authentication", async () => {
    const firm = env.firm();
    firm.metrics.configure({ gaugeInterval: 0 });
    firm.defineJob("mail", async () => undefined, { queue: "outbox" });
    await firm.enqueue("mail", {});
    const dashboard = createDashboard({ firm, basePath: "/admin/jobs", bearerToken: "s3cret-token-for-tests" });
    const refused = await dashboard.fetch(new Request("http://localhost/admin/jobs/metrics"));
    expect(refused.status).toBe(401);
    const response = await dashboard.fetch(
      new Request("http://localhost/admin/jobs/metrics", {
        headers: { authorization: "Bearer s3cret-token-for-tests" },
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const scrape = parseScrape(await response.text());
    expect(scrape.value("firm_queue_jobs", { queue: "outbox", state: "ready" })).toBe(1);
  });

  it("counts job outcomes from the job events: enqueued, finished, retried, failed, abandoned, dropped, run time and queue wait", async () => {
    const firm = env.firm();
    firm.metrics.enable();
    firm.defineJob("ok", async () => undefined);
    firm.defineJob(
      "broken",
      async () => {
        throw new Error("broken on purpose");
      },
      { queue: "fragile", retry: { attempts: 2, backoff: "10ms", jitter: 0 } },
    );
    firm.defineJob(
      "skip",
      async () => {
        throw new Error("not worth retrying");
      },
      { retry: { attempts: 5, abandonOn: () => true } },
    );
    firm.defineJob("once", async () => undefined, { concurrency: { key: () => "only", to: 1, onConflict: "drop" } });
    for (let i = 0; i < 3; i++) await firm.enqueue("ok", { i });
    const broken = (await firm.enqueue("broken", null)).id;
    const skipped = (await firm.enqueue("skip", null)).id;
    expect((await firm.enqueue("once", null)).status).toBe("created");
    expect((await firm.enqueue("once", null)).status).toBe("dropped");
    const later = (await firm.enqueue("ok", { i: 99 }, { wait: "1h" })).id!;
    expect(await firm.jobs.cancel(later)).toBe("cancelled");
    const supervisor = await firm.start({
      workers: [{ queues: "*", concurrency: 2, pollingInterval: "20ms" }],
      dispatchers: [{ pollingInterval: "50ms" }],
    });
    await waitFor(
      async () =>
        (await firm.getJob(broken!))?.state === "failed" && (await firm.getJob(skipped!))?.state === "finished",
      30_000,
      "the broken job to fail and the skipped one to be abandoned",
    );
    await waitFor(
      async () => (await firm.inspect.queues()).every((queue) => queue.ready + queue.claimed === 0),
      30_000,
    );
    await supervisor.stop();
    const scrape = parseScrape(await firm.metrics.text());
    const ok = { queue: "default", job: "ok" };
    const fragile = { queue: "fragile", job: "broken" };
    const skip = { queue: "default", job: "skip" };
    expect(scrape.value("firm_queue_jobs_enqueued_total", ok)).toBe(4);
    expect(scrape.value("firm_queue_jobs_cancelled_total", ok)).toBe(1);
    expect(scrape.value("firm_queue_jobs_enqueued_total", fragile)).toBe(1);
    expect(scrape.value("firm_queue_jobs_finished_total", ok)).toBe(3);
    expect(scrape.value("firm_queue_jobs_retried_total", fragile)).toBe(1);
    expect(scrape.value("firm_queue_jobs_failed_total", fragile)).toBe(1);
    expect(scrape.value("firm_queue_jobs_abandoned_total", skip)).toBe(1);
    expect(scrape.value("firm_queue_jobs_dropped_total", { queue: "default", job: "once" })).toBe(1);
    expect(scrape.value("firm_queue_jobs_finished_total", fragile)).toBeUndefined();
    expect(scrape.value("firm_queue_job_run_seconds_count", ok)).toBe(3);
    expect(scrape.value("firm_queue_job_run_seconds_count", fragile)).toBe(2);
    expect(scrape.value("firm_queue_job_run_seconds_count", skip)).toBe(1);
    expect(scrape.value("firm_queue_job_queue_wait_seconds_count", ok)).toBe(3);
    expect(scrape.value("firm_queue_job_queue_wait_seconds_count", fragile)).toBe(2);
    expect(scrape.value("firm_queue_job_queue_wait_seconds_sum", ok)).toBeGreaterThanOrEqual(0);
  });
});
