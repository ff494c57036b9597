import { ConfigurationError } from "../../errors.js";
import type { BatchSummary } from "../../models/batch-listing.js";
import { progressBar } from "../charts.js";
import { stateBadge } from "../components.js";
import { href, type PageContext } from "../context.js";
import { count, timeAgo } from "../format.js";
import { html, type SafeHtml } from "../html.js";
import type { Page } from "../layout.js";
import { PageError } from "./page-error.js";

/** Batches, newest first, page by page: state, progress and counts, each linking to its page. */
export async function batchesPage(context: PageContext): Promise<Page> {
  const cursor = context.query.get("cursor");
  const page = await asPageError(() => context.firm.inspect.batches({ cursor: cursor || null }));
  const body = html`<div data-live id="batches">${batchTable(context, page.batches)}</div>
<nav class="pager" aria-label="Pages">
${cursor ? html`<a href="${href(context, "/batches")}">« Newest</a>` : ""}
${page.nextCursor ? html`<a rel="next" href="${href(context, "/batches", { cursor: page.nextCursor })}">Older »</a>` : html`<span class="muted">End of list</span>`}
</nav>`;
  return { title: "Batches", section: "/batches", body };
}

function batchTable(context: PageContext, batches: readonly BatchSummary[]): SafeHtml {
  if (batches.length === 0) return html`<p class="empty">No batch has been written.</p>`;
  return html`<div class="table-wrap"><table class="batches">
<thead><tr><th scope="col">Batch</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col" class="num">Jobs</th><th scope="col" class="num">Pending</th><th scope="col" class="num">Finished</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Cancelled</th><th scope="col">Created</th><th scope="col">Ended</th></tr></thead>
<tbody>${batches.map(
    (batch) => html`<tr>
<th scope="row"><a href="${href(context, `/batches/${batch.id}`)}">#${batch.id}</a></th>
<td>${stateBadge(batch.state)}</td>
<td>${progressBar(batch)}</td>
<td class="num">${count(batch.total)}</td>
<td class="num">${count(batch.pending)}</td>
<td class="num">${count(batch.finished)}</td>
<td class="num">${count(batch.failed)}</td>
<td class="num">${count(batch.cancelled)}</td>
<td>${timeAgo(batch.createdAt, context.now)}</td>
<td>${timeAgo(batch.endedAt, context.now)}</td>
</tr>`,
  )}</tbody></table></div>`;
}

/** A read whose refusal of the request's input (a forged cursor, a bad id) is a 400 page. */
export async function asPageError<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ConfigurationError) throw new PageError(400, error.message);
    throw error;
  }
}
