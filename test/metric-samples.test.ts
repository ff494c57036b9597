import { describe, expect, it } from "vitest";
import { ChildSamples, MetricSamples, sumSnapshots } from "../src/metric-samples.js";
import { formatExposition } from "../src/metrics-exposition.js";
import { sampleFamilies } from "../src/facade/metric-families.js";
import { parseScrape } from "./support/prometheus-text.js";

describe("metric samples", () => {
  it("counts and buckets by queue and job, and sums snapshots label by label", () => {
    const a = new MetricSamples();
    a.count("finished", "default", "mail");
    a.count("finished", "default", "mail");
    a.observe("runTime", "default", "mail", 0.003);
    a.observe("runTime", "default", "mail", 2);
    a.observe("runTime", "default", "mail", 7200);
    const b = new MetricSamples();
    b.count("finished", "default", "mail", 3);
    b.count("failed", "other", "report");
    b.observe("runTime", "default", "mail", -1); // a clock step: counted as 0
    const scrape = parseScrape(formatExposition(sampleFamilies(sumSnapshots([a.snapshot(), b.snapshot()]))));
    const mail = { queue: "default", job: "mail" };
    expect(scrape.value("firm_queue_jobs_finished_total", mail)).toBe(5);
    expect(scrape.value("firm_queue_jobs_failed_total", { queue: "other", job: "report" })).toBe(1);
    expect(scrape.value("firm_queue_job_run_seconds_bucket", { ...mail, le: "0.005" })).toBe(2);
    expect(scrape.value("firm_queue_job_run_seconds_bucket", { ...mail, le: "2.5" })).toBe(3);
    expect(scrape.value("firm_queue_job_run_seconds_bucket", { ...mail, le: "3600" })).toBe(3);
    expect(scrape.value("firm_queue_job_run_seconds_bucket", { ...mail, le: "+Inf" })).toBe(4);
    expect(scrape.value("firm_queue_job_run_seconds_count", mail)).toBe(4);
    expect(scrape.value("firm_queue_job_run_seconds_sum", mail)).toBeCloseTo(7202.003);
  });

  it("keeps an exited child's counts in the sum, and counts each child's cumulative snapshot once", () => {
    const children = new ChildSamples();
    const first = new MetricSamples();
    first.count("finished", "q", "j", 4);
    children.update("worker-1", first.snapshot());
    children.update("worker-1", first.snapshot()); // sent again: not added twice
    const second = new MetricSamples();
    second.count("finished", "q", "j", 2);
    children.update("worker-2", second.snapshot());
    children.retire("worker-1");
    const replacement = new MetricSamples();
    replacement.count("finished", "q", "j", 1);
    children.update("worker-3", replacement.snapshot());
    const total = children.total();
    expect(total.counters.finished).toEqual([["q", "j", 7]]);
  });

  it("sums the workflow counters and the batches ended by state over children, an exited one's too", () => {
    const children = new ChildSamples();
    const first = new MetricSamples();
    first.count("pending", "q", "parent", 2);
    first.count("dependencyCancelled", "q", "parent");
    first.countBatchEnded("finished");
    first.countBatchEnded("failed", 2);
    children.update("worker-1", first.snapshot());
    const second = new MetricSamples();
    second.count("dependenciesMet", "q", "parent");
    second.countBatchEnded("finished", 3);
    children.update("worker-2", second.snapshot());
    children.retire("worker-1");
    const own = new MetricSamples();
    own.countBatchEnded("cancelled");
    const scrape = parseScrape(formatExposition(sampleFamilies(sumSnapshots([own.snapshot(), children.total()]))));
    const parent = { queue: "q", job: "parent" };
    expect(scrape.value("firm_queue_jobs_pending_total", parent)).toBe(2);
    expect(scrape.value("firm_queue_jobs_dependencies_met_total", parent)).toBe(1);
    expect(scrape.value("firm_queue_jobs_dependency_cancelled_total", parent)).toBe(1);
    expect(scrape.value("firm_queue_batches_ended_total", { state: "finished" })).toBe(4);
    expect(scrape.value("firm_queue_batches_ended_total", { state: "failed" })).toBe(2);
    expect(scrape.value("firm_queue_batches_ended_total", { state: "cancelled" })).toBe(1);
    // A snapshot that counts no batch (an older child) adds nothing and breaks nothing.
    expect(sumSnapshots([{ counters: {}, histograms: {} }]).batchesEnded).toBeUndefined();
  });

  it("escapes label values and help text in the text format", () => {
    const samples = new MetricSamples();
    samples.count("enqueued", 'we"ird\\queue\nname', "job");
    const text = formatExposition(sampleFamilies(samples.snapshot()));
    expect(text).toContain('firm_queue_jobs_enqueued_total{queue="we\\"ird\\\\queue\\nname",job="job"} 1\n');
    expect(
      parseScrape(text).value("firm_queue_jobs_enqueued_total", { queue: 'we"ird\\queue\nname', job: "job" }),
    ).toBe(1);
  });
});
