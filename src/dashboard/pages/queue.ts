import { jobTable, postForm, stateTabs } from "../components.js";
import { href, type PageContext } from "../context.js";
import { count, duration } from "../format.js";
import { html } from "../html.js";
import type { Page } from "../layout.js";
import { readFilters } from "./job-list.js";
import { filterForm, listPage, pager } from "./jobs.js";

/** One queue: counts, its jobs by state, pause, resume and clear. */
export async function queuePage(context: PageContext, name: string): Promise<Page> {
  const filters = { ...readFilters(context.query, "ready"), queue: name };
  const [queues, page] = await Promise.all([context.firm.inspect.queues(), listPage(context, filters)]);
  const queue = queues.find((candidate) => candidate.name === name) ?? {
    name,
    ready: 0,
    scheduled: 0,
    claimed: 0,
    blocked: 0,
    failed: 0,
    latency: 0,
    paused: false,
  };
  const path = `/queues/${encodeURIComponent(name)}`;
  const body = html`
<section class="queue-summary" data-live id="queue-summary">
<dl class="facts">
<div><dt>Status</dt><dd>${queue.paused ? html`<span class="badge paused">paused</span>` : html`<span class="badge running">active</span>`}</dd></div>
<div><dt>Ready</dt><dd>${count(queue.ready)}</dd></div>
<div><dt>Latency</dt><dd>${queue.ready > 0 ? duration(queue.latency) : "—"}</dd></div>
<div><dt>Scheduled</dt><dd>${count(queue.scheduled)}</dd></div>
<div><dt>Running</dt><dd>${count(queue.claimed)}</dd></div>
<div><dt>Blocked</dt><dd>${count(queue.blocked)}</dd></div>
<div><dt>Failed</dt><dd>${count(queue.failed)}</dd></div>
</dl>
</section>
<div class="actions">
${queue.paused ? postForm(context, `${path}/resume`, html`<button type="submit">Resume queue</button>`) : postForm(context, `${path}/pause`, html`<button type="submit">Pause queue</button>`)}
${postForm(
  context,
  `${path}/clear`,
  html`<label class="confirm"><input type="checkbox" name="confirm" value="yes" required> I mean it: delete every ready job of ${name}</label> <button type="submit" class="danger">Clear ready jobs</button>`,
  { class: "clear" },
)}
</div>
${stateTabs(context, path, filters.state, { name: filters.name })}
${filterForm(context, path, filters, { queue: false })}
<div data-live id="job-list">${jobTable(context, page.jobs, filters.state)}</div>
${pager(context, path, filters, page)}
<p><a href="${href(context, "/")}">« All queues</a></p>`;
  return { title: `Queue ${name}`, section: "/", body };
}
