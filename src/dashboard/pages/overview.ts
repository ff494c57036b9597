import type { QueueCounts } from "../../models/queue-counts.js";
import { backlogChart, throughputChart } from "../charts.js";
import { href, type PageContext } from "../context.js";
import { count, duration } from "../format.js";
import { html, type SafeHtml } from "../html.js";
import type { Page } from "../layout.js";

const COLUMNS = ["ready", "scheduled", "claimed", "blocked", "failed"] as const;

/** Every queue with its counts, latency and pause; totals; throughput and backlog charts. */
export async function overviewPage(context: PageContext): Promise<Page> {
  const [queues, throughput] = await Promise.all([context.firm.inspect.queues(), context.firm.inspect.throughput()]);
  const totals = Object.fromEntries(
    COLUMNS.map((column) => [column, queues.reduce((sum, queue) => sum + queue[column], 0)]),
  ) as Record<(typeof COLUMNS)[number], number>;
  const body = html`
<section aria-label="Totals" class="totals" data-live id="totals">
${COLUMNS.map((column) => html`<a class="total total-${column}" href="${href(context, "/jobs", { state: column })}"><span class="figure">${count(totals[column])}</span><span class="label">${column === "claimed" ? "running" : column}</span></a>`)}
</section>
<div class="charts">
<section><h2>Throughput per minute, last hour</h2><div data-live id="throughput">${throughputChart(throughput)}</div></section>
<section><h2>Backlog</h2>${backlogChart(totals.ready + totals.scheduled + totals.blocked)}</section>
</div>
<section><h2>Queues</h2><div data-live id="queues">${queueTable(context, queues)}</div></section>`;
  return { title: "Overview", section: "/", body };
}

function queueTable(context: PageContext, queues: readonly QueueCounts[]): SafeHtml {
  if (queues.length === 0) return html`<p class="empty">No queue has unfinished jobs.</p>`;
  return html`<div class="table-wrap"><table class="queues">
<thead><tr><th scope="col">Queue</th>${COLUMNS.map((column) => html`<th scope="col" class="num">${column === "claimed" ? "running" : column}</th>`)}<th scope="col" class="num">Latency</th><th scope="col">Status</th></tr></thead>
<tbody>${queues.map(
    (queue) => html`<tr>
<th scope="row"><a href="${href(context, `/queues/${encodeURIComponent(queue.name)}`)}">${queue.name}</a></th>
${COLUMNS.map((column) => html`<td class="num">${queue[column] > 0 ? html`<a href="${href(context, "/jobs", { state: column, queue: queue.name })}">${count(queue[column])}</a>` : "0"}</td>`)}
<td class="num">${queue.ready > 0 ? duration(queue.latency) : "—"}</td>
<td>${queue.paused ? html`<span class="badge paused">paused</span>` : html`<span class="badge running">active</span>`}</td>
</tr>`,
  )}</tbody></table></div>`;
}
