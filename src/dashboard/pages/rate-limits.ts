import { href, type PageContext } from "../context.js";
import { count, duration, timeAgo } from "../format.js";
import { html } from "../html.js";
import type { Page } from "../layout.js";

/** Rate-limit budgets: limit per period, starts in the current window, jobs waiting, when each reopens. */
export async function rateLimitsPage(context: PageContext): Promise<Page> {
  const budgets = await context.firm.inspect.rateLimits();
  const body = html`<div data-live id="rate-limits">${
    budgets.length === 0
      ? html`<p class="empty">No rate limit is defined.</p>`
      : html`<div class="table-wrap"><table class="semaphores">
<thead><tr><th scope="col">Budget</th><th scope="col" class="num">Limit</th><th scope="col">Per</th><th scope="col" class="num">Used now</th><th scope="col" class="num">Waiting</th><th scope="col">Reopens</th></tr></thead>
<tbody>${budgets.map(
          (budget) => html`<tr>
<th scope="row" class="name">${budget.queue === null ? budget.budget : html`<a href="${href(context, `/queues/${encodeURIComponent(budget.queue)}`)}">${budget.budget}</a>`}</th>
<td class="num">${count(budget.limit)}</td>
<td>${duration(budget.periodMs)}</td>
<td class="num">${count(budget.used)}</td>
<td class="num">${budget.waiting === 0 ? html`<span class="muted">—</span>` : html`<strong>${count(budget.waiting)}</strong>`}</td>
<td>${budget.reopensAt === null ? html`<span class="muted">has room</span>` : html`${budget.closedUntil !== null ? "closed, " : "full, "}${timeAgo(budget.reopensAt, context.now)}`}</td>
</tr>`,
        )}</tbody></table></div>`
  }</div>`;
  return { title: "Rate limits", section: "/rate-limits", body };
}
