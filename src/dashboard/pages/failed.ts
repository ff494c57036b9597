import { jobTable, postForm } from "../components.js";
import { href, type PageContext } from "../context.js";
import { count } from "../format.js";
import { html } from "../html.js";
import type { Page } from "../layout.js";
import { readFilters } from "./job-list.js";
import { filterForm, listPage, pager } from "./jobs.js";

/** Failed jobs with their errors; retry or delete one, the selected ones, or all matching the filter. */
export async function failedPage(context: PageContext): Promise<Page> {
  const filters = { ...readFilters(context.query, "failed"), state: "failed" as const };
  const page = await listPage(context, filters);
  // Counting stops at 10,000: a bigger figure would cost a scan of every failed job per render.
  const { cursor: _cursor, ...countFilters } = filters;
  const counted = await context.firm.inspect.count({ ...countFilters, upTo: 10_000 });
  const total = counted.count;
  const shown = `${count(total)}${counted.exact ? "" : "+"}`;
  const selection = context.readOnly
    ? jobTable(context, page.jobs, "failed", { empty: "No failed jobs." })
    : postForm(
        context,
        "/failed/retry",
        html`${jobTable(context, page.jobs, "failed", { select: true, empty: "No failed jobs." })}
${page.jobs.length > 0 ? html`<div class="actions"><button type="submit">Retry selected</button> <button type="submit" class="danger" formaction="${href(context, "/failed/delete")}">Delete selected</button></div>` : ""}`,
        { id: "failed-selection" },
      );
  const everything =
    page.jobs.length === 0
      ? html``
      : html`<div class="actions bulk">
${postForm(context, "/failed/retry-all", html`<input type="hidden" name="queue" value="${filters.queue ?? ""}"><input type="hidden" name="name" value="${filters.name ?? ""}"><button type="submit">Retry all ${shown} matching</button>`)}
${postForm(
  context,
  "/failed/delete-all",
  html`<input type="hidden" name="queue" value="${filters.queue ?? ""}"><input type="hidden" name="name" value="${filters.name ?? ""}"><label class="confirm"><input type="checkbox" name="confirm" value="yes" required> I mean it</label> <button type="submit" class="danger">Delete all ${shown} matching</button>`,
)}
</div>`;
  const body = html`
<p class="lead" data-live id="failed-count">${shown} failed job${total === 1 && counted.exact ? "" : "s"}${filters.queue ? html` in queue ${filters.queue}` : ""}${filters.name ? html` named ${filters.name}` : ""}.</p>
${filterForm(context, "/failed", filters, { times: false })}
${selection}
${pager(context, "/failed", filters, page)}
${everything}`;
  return { title: "Failed jobs", section: "/failed", body };
}
