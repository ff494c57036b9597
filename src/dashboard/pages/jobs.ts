import { ConfigurationError } from "../../errors.js";
import type { JobPage } from "../../models/job-listing.js";
import { jobTable, stateTabs } from "../components.js";
import { href, type PageContext } from "../context.js";
import { html, type SafeHtml } from "../html.js";
import type { Page } from "../layout.js";
import { readFilters, type ListingFilters } from "./job-list.js";
import { PageError } from "./page-error.js";

/** Jobs by state with filters, lookup by id and keyset pages. */
export async function jobsPage(context: PageContext): Promise<Page> {
  const filters = readFilters(context.query, "ready");
  const page = await listPage(context, filters);
  const params = paramsOf(filters);
  const body = html`
<form class="lookup" method="get" action="${href(context, "/jobs/lookup")}" role="search">
<label>Job id <input name="id" inputmode="numeric" pattern="[0-9]+" required size="10"></label> <button type="submit">Open</button>
</form>
${stateTabs(context, "/jobs", filters.state, params)}
${filterForm(context, "/jobs", filters)}
<div data-live id="job-list">${jobTable(context, page.jobs, filters.state)}</div>
${pager(context, "/jobs", filters, page)}`;
  return { title: "Jobs", section: "/jobs", body };
}

/** The listing for `filters`, with a bad cursor or filter turned into a 400 page. */
export async function listPage(context: PageContext, filters: ListingFilters, limit = 50): Promise<JobPage> {
  try {
    return await context.firm.inspect.jobs({ ...filters, limit, cursor: filters.cursor ?? null });
  } catch (error) {
    if (error instanceof ConfigurationError) throw new PageError(400, error.message);
    throw error;
  }
}

/** The filters as query parameters, without the cursor. */
export function paramsOf(filters: ListingFilters): Record<string, string | undefined> {
  return {
    queue: filters.queue,
    name: filters.name,
    from: filters.from?.toISOString().slice(0, 19),
    to: filters.to?.toISOString().slice(0, 19),
  };
}

/** The filter form of a listing (queue, name, time range in UTC). */
export function filterForm(
  context: PageContext,
  path: string,
  filters: ListingFilters,
  options: { queue?: boolean; times?: boolean } = {},
): SafeHtml {
  const params = paramsOf(filters);
  return html`<form class="filters" method="get" action="${href(context, path)}">
<input type="hidden" name="state" value="${filters.state}">
${options.queue === false ? "" : html`<label>Queue <input name="queue" value="${filters.queue ?? ""}" size="12"></label>`}
<label>Job name <input name="name" value="${filters.name ?? ""}" size="16"></label>
${
  options.times === false
    ? ""
    : html`<label>From (UTC) <input type="datetime-local" step="1" name="from" value="${params.from ?? ""}"></label>
<label>To (UTC) <input type="datetime-local" step="1" name="to" value="${params.to ?? ""}"></label>`
}
<button type="submit">Filter</button> <a href="${href(context, path, { state: filters.state })}">Clear filters</a>
</form>`;
}

/** Links to the first and the next page; no page numbers, since pages are keyset ranges. */
export function pager(
  context: PageContext,
  path: string,
  filters: ListingFilters,
  page: JobPage,
  extra: Record<string, string | undefined> = {},
): SafeHtml {
  const params = { ...extra, ...paramsOf(filters), state: filters.state };
  return html`<nav class="pager" aria-label="Pages">
${filters.cursor ? html`<a href="${href(context, path, params)}">« Newest</a>` : ""}
${page.nextCursor ? html`<a rel="next" href="${href(context, path, { ...params, cursor: page.nextCursor })}">Older »</a>` : html`<span class="muted">End of list</span>`}
</nav>`;
}
