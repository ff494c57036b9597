import type { BatchCallbackInfo } from "../../facade/batch-inspection.js";
import { progressBar } from "../charts.js";
import { stateBadge } from "../components.js";
import { href, type PageContext } from "../context.js";
import { count, shortValue, utc } from "../format.js";
import { html, type SafeHtml } from "../html.js";
import type { Page } from "../layout.js";
import { asPageError } from "./batches.js";
import { PageError } from "./page-error.js";

/** One batch: its state, counts and progress, its callbacks, and its jobs page by page as links. */
export async function batchPage(context: PageContext, idText: string): Promise<Page> {
  const id = Number(idText);
  if (!/^\d+$/.test(idText) || !Number.isSafeInteger(id) || id < 1)
    throw new PageError(400, `Not a batch id: ${JSON.stringify(idText)}`);
  const cursor = context.query.get("cursor");
  const batch = await asPageError(() => context.firm.inspect.batch(id, { cursor: cursor || null }));
  if (!batch) throw new PageError(404, `There is no batch #${id}.`);
  const ended = batch.finished + batch.failed + batch.cancelled;
  const path = `/batches/${batch.id}`;
  const body = html`
<div data-live id="batch-detail">
<dl class="facts">
<div><dt>State</dt><dd>${stateBadge(batch.state)}</dd></div>
<div><dt>Jobs</dt><dd>${count(batch.total)}</dd></div>
<div><dt>Pending</dt><dd>${count(batch.pending)}</dd></div>
<div><dt>Finished</dt><dd>${count(batch.finished)}</dd></div>
<div><dt>Failed</dt><dd>${count(batch.failed)}</dd></div>
<div><dt>Cancelled</dt><dd>${count(batch.cancelled)}</dd></div>
<div><dt>Created</dt><dd>${utc(batch.createdAt)}</dd></div>
<div><dt>Ended</dt><dd>${batch.endedAt ? utc(batch.endedAt) : "—"}</dd></div>
</dl>
<figure class="chart">
${progressBar(batch)}
<figcaption class="progress-caption">${count(ended)} of ${count(batch.total)} jobs ended (${batch.total === 0 ? 0 : Math.floor((ended / batch.total) * 100)}%). <span class="key key-finished">finished</span> <span class="key key-failed">failed</span> <span class="key key-cancelled">cancelled</span> <span class="key key-pending">pending</span></figcaption>
</figure>
<h2>Callbacks</h2>
${callbackTable(batch.callbacks)}
<h2>Jobs</h2>
${
  batch.jobs.length === 0
    ? html`<p class="empty">No jobs on this page.</p>`
    : html`<div class="table-wrap"><table class="batch-jobs">
<thead><tr><th scope="col">Job</th><th scope="col">Name</th><th scope="col">State</th><th scope="col">Counted as</th></tr></thead>
<tbody>${batch.jobs.map(
        (job) => html`<tr>
<td>${job.state === "deleted" ? html`#${job.id}` : html`<a href="${href(context, `/jobs/${job.id}`)}">#${job.id}</a>`}</td>
<td class="name">${job.name ?? html`<span class="muted">—</span>`}</td>
<td>${stateBadge(job.state)}</td>
<td>${job.ended ?? html`<span class="muted">not ended</span>`}</td>
</tr>`,
      )}</tbody></table></div>`
}
</div>
<nav class="pager" aria-label="Pages">
${cursor ? html`<a href="${href(context, path)}">« First jobs</a>` : ""}
${batch.nextCursor ? html`<a rel="next" href="${href(context, path, { cursor: batch.nextCursor })}">More jobs »</a>` : html`<span class="muted">End of list</span>`}
</nav>
<p><a href="${href(context, "/batches")}">All batches</a></p>`;
  return { title: `Batch #${batch.id}`, section: "/batches", body };
}

function callbackTable(callbacks: {
  readonly onSuccess: BatchCallbackInfo | null;
  readonly onFailure: BatchCallbackInfo | null;
  readonly onFinish: BatchCallbackInfo | null;
}): SafeHtml {
  const rows = (
    [
      ["onSuccess", "every job finished", callbacks.onSuccess],
      ["onFailure", "a job failed for good", callbacks.onFailure],
      ["onFinish", "always", callbacks.onFinish],
    ] as const
  ).filter(([, , callback]) => callback !== null);
  if (rows.length === 0) return html`<p class="empty">This batch has no callbacks.</p>`;
  return html`<div class="table-wrap"><table class="callbacks">
<thead><tr><th scope="col">Callback</th><th scope="col">When</th><th scope="col">Job</th><th scope="col">Queue</th><th scope="col">Arguments</th></tr></thead>
<tbody>${rows.map(
    ([which, when, callback]) => html`<tr>
<th scope="row">${which}</th><td>${when}</td><td class="name">${callback!.name}</td><td>${callback!.queue}</td><td><code class="args">${shortValue(callback!.arguments)}</code></td>
</tr>`,
  )}</tbody></table></div>`;
}
