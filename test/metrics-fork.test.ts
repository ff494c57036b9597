import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { afterEach, expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { spawnCli, type Spawned } from "./support/processes.js";
import { parseScrape, type Scrape } from "./support/prometheus-text.js";
import { waitForProcesses, waitWhile } from "./support/supervised.js";

let running: Spawned | undefined;

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describeEachDatabase("metrics of a fork-mode supervisor", (env) => {
  // Before the harness empties the tables (see stopProcesses in support/processes.ts).
  afterEach(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill("SIGTERM");
      await running.finished;
    }
    running = undefined;
  });

  it("serves the sum of its two workers' counters and histograms on one port", async () => {
    const port = await freePort();
    const jobLog = join(mkdtempSync(join(tmpdir(), "firm-queue-metrics-")), "jobs.log");
    const run = spawnCli(["start", "--config", "test/fixtures/metrics.config.ts", "--metrics-port", String(port)], {
      FIRM_QUEUE_DATABASE_URL: env.url,
      FIXTURE_LOG: jobLog,
    });
    running = run;
    await waitForProcesses(await env.db(), run, { workers: 2 });
    const firm = env.firm();
    // Eight naps of 300 ms on two workers of two slots each, claiming only for free slots: both get some.
    for (let i = 0; i < 8; i++) await firm.enqueue("nap", { ms: 300 }, { undeclared: true });
    await firm.enqueue("broken", null, { queue: "fragile", undeclared: true });
    let scrape: Scrape | undefined;
    await waitWhile(
      run,
      async () => {
        const response = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null);
        if (response?.status !== 200) return false;
        scrape = parseScrape(await response.text());
        return (
          scrape.value("firm_queue_jobs_finished_total", { queue: "default", job: "nap" }) === 8 &&
          scrape.value("firm_queue_jobs_failed_total", { queue: "fragile", job: "broken" }) === 1
        );
      },
      "the scraped counters to reach 8 naps finished and 1 broken job failed",
    );
    const ranBy = new Set(
      readFileSync(jobLog, "utf8")
        .split("\n")
        .filter((line) => line.startsWith("nap "))
        .map((line) => line.split(" ")[1]),
    );
    expect(ranBy.size).toBe(2);
    const labels = { queue: "default", job: "nap" };
    expect(scrape!.value("firm_queue_job_run_seconds_count", labels)).toBe(8);
    expect(scrape!.value("firm_queue_job_run_seconds_sum", labels)).toBeGreaterThanOrEqual(8 * 0.3 - 0.01);
    expect(scrape!.value("firm_queue_job_run_seconds_bucket", { ...labels, le: "0.25" })).toBe(0);
    expect(scrape!.value("firm_queue_job_run_seconds_bucket", { ...labels, le: "+Inf" })).toBe(8);
    expect(scrape!.value("firm_queue_job_queue_wait_seconds_count", labels)).toBe(8);
    const broken = { queue: "fragile", job: "broken" };
    expect(scrape!.value("firm_queue_jobs_retried_total", broken)).toBe(1);
    expect(scrape!.value("firm_queue_job_run_seconds_count", broken)).toBe(2);
    expect(scrape!.value("firm_queue_job_queue_wait_seconds_count", broken)).toBe(2);
    // Enqueued by this test's process, not by the supervisor's children.
    expect(scrape!.value("firm_queue_jobs_enqueued_total", labels)).toBeUndefined();
    expect(scrape!.value("firm_queue_processes", { kind: "Worker" })).toBe(2);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, roles: { expected: 3, alive: 3 } });
  });

  it("serves the workflow counters its children counted: dependents released and cancelled, batches ended", async () => {
    const port = await freePort();
    const run = spawnCli(["start", "--config", "test/fixtures/metrics.config.ts", "--metrics-port", String(port)], {
      FIRM_QUEUE_DATABASE_URL: env.url,
    });
    running = run;
    await waitForProcesses(await env.db(), run, { workers: 2 });
    const firm = env.firm();
    // Declared here only so that firm.batch accepts the name; the children run it.
    firm.defineJob("nap", async () => undefined);
    const first = await firm.enqueue("nap", { ms: 10 });
    await firm.enqueue("nap", { ms: 10 }, { dependsOn: [first.id!] });
    const broken = await firm.enqueue("broken", null, { queue: "fragile", undeclared: true });
    await firm.enqueue("nap", { ms: 10 }, { dependsOn: [broken.id!] });
    await firm.batch([{ name: "nap", args: { ms: 10 } }]);
    let scrape: Scrape | undefined;
    const nap = { queue: "default", job: "nap" };
    await waitWhile(
      run,
      async () => {
        const response = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null);
        if (response?.status !== 200) return false;
        scrape = parseScrape(await response.text());
        return (
          scrape.value("firm_queue_jobs_dependencies_met_total", nap) === 1 &&
          scrape.value("firm_queue_jobs_dependency_cancelled_total", nap) === 1 &&
          scrape.value("firm_queue_batches_ended_total", { state: "finished" }) === 1
        );
      },
      "the children's workflow counters to reach the supervisor's scrape",
    );
    // Pending jobs are counted where they were enqueued: this test's process, not the supervisor.
    expect(scrape!.value("firm_queue_jobs_pending_total", nap)).toBeUndefined();
    // A CLI supervisor with two children to boot: the default 30 s is short on a loaded machine.
  }, 90_000);
});
