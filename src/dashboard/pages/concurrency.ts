import { href, type PageContext } from "../context.js";
import { count, timeAgo } from "../format.js";
import { html } from "../html.js";
import type { Page } from "../layout.js";

/** Concurrency keys: limit, slots in use and free, the running jobs holding them and the jobs waiting. */
export async function concurrencyPage(context: PageContext): Promise<Page> {
  const keys = await context.firm.inspect.semaphores();
  const body = html`<div data-live id="semaphores">${
    keys.length === 0
      ? html`<p class="empty">No concurrency key is in use.</p>`
      : html`<div class="table-wrap"><table class="semaphores">
<thead><tr><th scope="col">Key</th><th scope="col" class="num">Limit</th><th scope="col" class="num">In use</th><th scope="col" class="num">Free</th><th scope="col">Expires</th><th scope="col">Running</th><th scope="col">Waiting</th></tr></thead>
<tbody>${keys.map(
          (key) => html`<tr>
<th scope="row" class="name">${key.key}</th>
<td class="num">${key.limit ?? html`<span class="muted" title="the job is not defined in this process">?</span>`}</td>
<td class="num">${key.inUse ?? html`<span class="muted">?</span>`}</td>
<td class="num">${key.available ?? html`<span class="muted">all</span>`}</td>
<td>${timeAgo(key.expiresAt, context.now)}</td>
<td>${key.running.length === 0 ? html`<span class="muted">—</span>` : html`<ul class="running">${key.running.map((job) => html`<li><a href="${href(context, `/jobs/${job.id}`)}">#${job.id}</a> <span class="name">${job.name}</span></li>`)}</ul>`}</td>
<td>${key.blockedCount === 0 ? html`<span class="muted">—</span>` : html`<strong>${count(key.blockedCount)}</strong><ul class="running">${key.blocked.map((job) => html`<li><a href="${href(context, `/jobs/${job.id}`)}">#${job.id}</a> <span class="name">${job.name}</span></li>`)}</ul>`}</td>
</tr>`,
        )}</tbody></table></div>`
  }</div>`;
  return { title: "Concurrency", section: "/concurrency", body };
}
