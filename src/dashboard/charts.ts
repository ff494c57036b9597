import type { ThroughputBucket } from "../models/throughput.js";
import { count, utc } from "./format.js";
import { html, type SafeHtml } from "./html.js";

const WIDTH = 600;
const HEIGHT = 120;

/**
 * Finished and failed jobs per bucket as an SVG bar chart (stacked: failed on top), drawn on the
 * server so it needs no script; colours come from the stylesheet's classes.
 */
export function throughputChart(buckets: readonly ThroughputBucket[]): SafeHtml {
  const peak = Math.max(1, ...buckets.map((bucket) => bucket.finished + bucket.failed));
  const step = WIDTH / Math.max(1, buckets.length);
  const bar = Math.max(1, step - 1);
  const scale = (value: number) => (value / peak) * (HEIGHT - 4);
  const finished = buckets.reduce((sum, bucket) => sum + bucket.finished, 0);
  const failed = buckets.reduce((sum, bucket) => sum + bucket.failed, 0);
  const first = buckets[0];
  const summary = `${count(finished)} finished and ${count(failed)} failed${first ? ` since ${utc(first.start)}` : ""}; busiest bucket ${count(peak)} jobs`;
  return html`<figure class="chart">
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-label="${summary}">
<line class="axis" x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}"></line>
${buckets.map((bucket, index) => {
  const x = (index * step).toFixed(1);
  const done = scale(bucket.finished);
  const bad = scale(bucket.failed);
  return html`<g><title>${utc(bucket.start)}: ${bucket.finished} finished, ${bucket.failed} failed</title><rect class="bar-finished" x="${x}" y="${(HEIGHT - done).toFixed(1)}" width="${bar.toFixed(1)}" height="${done.toFixed(1)}"></rect><rect class="bar-failed" x="${x}" y="${(HEIGHT - done - bad).toFixed(1)}" width="${bar.toFixed(1)}" height="${bad.toFixed(1)}"></rect></g>`;
})}
</svg>
<figcaption>${summary}. <span class="key key-finished">finished</span> <span class="key key-failed">failed</span></figcaption>
</figure>`;
}

/**
 * The backlog chart's frame: the page's script adds a point at each live refresh (the tables
 * keep no history of past backlogs), from the `data-backlog` figure of the overview.
 */
export function backlogChart(backlog: number): SafeHtml {
  return html`<figure class="chart">
<svg id="backlog-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-label="Backlog (ready and scheduled jobs) since this page opened"><polyline class="backlog-line" points=""></polyline></svg>
<figcaption>Backlog (ready + scheduled + blocked) since this page opened: <strong data-live id="backlog-now" data-backlog="${backlog}">${count(backlog)}</strong></figcaption>
</figure>`;
}

/** The counts a progress bar shows: a batch's. */
export interface ProgressCounts {
  readonly total: number;
  readonly finished: number;
  readonly failed: number;
  readonly cancelled: number;
}

/**
 * How far a batch has got, as a horizontal SVG bar in the charts' colours: finished, failed and
 * cancelled jobs from the left, what is still pending left empty. Drawn on the server with
 * attributes only (the Content-Security-Policy allows no inline style); the label says it in words.
 */
export function progressBar(counts: ProgressCounts): SafeHtml {
  const total = Math.max(1, counts.total);
  const ended = counts.finished + counts.failed + counts.cancelled;
  const summary = `${count(ended)} of ${count(counts.total)} ended: ${count(counts.finished)} finished, ${count(counts.failed)} failed, ${count(counts.cancelled)} cancelled`;
  let x = 0;
  const segment = (value: number, kind: string) => {
    const width = (value / total) * 100;
    const rect = html`<rect class="bar-${kind}" x="${x.toFixed(2)}" y="0" width="${width.toFixed(2)}" height="10"></rect>`;
    x += width;
    return rect;
  };
  return html`<svg class="progress-bar" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" aria-label="${summary}"><title>${summary}</title><rect class="bar-pending" x="0" y="0" width="100" height="10"></rect>${segment(counts.finished, "finished")}${segment(counts.failed, "failed")}${segment(counts.cancelled, "cancelled")}</svg>`;
}
