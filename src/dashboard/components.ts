import type { JobState } from "../models/job-info.js";
import type { JobSummary } from "../models/job-listing.js";
import { href, type PageContext } from "./context.js";
import { shortValue, timeAgo, truncate } from "./format.js";
import { html, type HtmlValue, type SafeHtml } from "./html.js";

/** Every state a job can be in, in the order the dashboard shows them. */
export const STATES: readonly JobState[] = [
  "ready",
  "scheduled",
  "claimed",
  "blocked",
  "failed",
  "finished",
  "cancelled",
];

/** What each state's time column means. */
export const SINCE_LABEL: Record<JobState, string> = {
  pending: "Enqueued",
  ready: "Ready since",
  scheduled: "Due",
  claimed: "Claimed",
  blocked: "Blocked since",
  throttled: "Waiting for budget since",
  failed: "Failed",
  finished: "Finished",
  cancelled: "Cancelled",
};

/** A state as a coloured label. */
export function stateBadge(state: string): SafeHtml {
  return html`<span class="state state-${state}">${state === "claimed" ? "running" : state}</span>`;
}

/** A POST form with the CSRF token; nothing at all in read-only mode. */
export function postForm(
  context: PageContext,
  action: string,
  content: HtmlValue,
  attributes: { class?: string; id?: string } = {},
): SafeHtml {
  if (context.readOnly) return html``;
  return html`<form method="post" action="${href(context, action)}"${attributes.class ? html` class="${attributes.class}"` : ""}${attributes.id ? html` id="${attributes.id}"` : ""}><input type="hidden" name="_csrf" value="${context.csrfToken}">${content}</form>`;
}

/** A table of jobs in one state, each linking to its page. */
export function jobTable(
  context: PageContext,
  jobs: readonly JobSummary[],
  state: JobState,
  options: { select?: boolean; empty?: string } = {},
): SafeHtml {
  if (jobs.length === 0) return html`<p class="empty">${options.empty ?? `No ${state} jobs.`}</p>`;
  return html`<div class="table-wrap"><table class="jobs">
<thead><tr>${options.select ? html`<th scope="col"><span class="sr-only">Select</span></th>` : ""}<th scope="col">Job</th><th scope="col">Name</th><th scope="col">Queue</th><th scope="col">Arguments</th><th scope="col">${SINCE_LABEL[state]}</th><th scope="col">${state === "failed" ? "Error" : "Attempts"}</th>${options.select ? html`<th scope="col">Actions</th>` : ""}</tr></thead>
<tbody>${jobs.map(
    (job) => html`<tr>
${options.select ? html`<td><input type="checkbox" name="ids" value="${job.id}" aria-label="Select job ${job.id}"></td>` : ""}
<td><a href="${href(context, `/jobs/${job.id}`)}">#${job.id}</a></td>
<td class="name">${job.name}</td>
<td><a href="${href(context, `/queues/${encodeURIComponent(job.queue)}`)}">${job.queue}</a></td>
<td><code class="args">${shortValue(job.arguments)}</code></td>
<td>${timeAgo(job.since, context.now)}</td>
<td>${job.error ? html`<span class="error-name">${job.error.name}</span> <span class="error-message">${truncate(job.error.message, 120)}</span>` : job.attempts}</td>
${options.select ? html`<td class="row-actions"><button type="submit" name="only" value="${job.id}" formaction="${href(context, "/failed/retry")}">Retry</button> <button type="submit" class="danger" name="only" value="${job.id}" formaction="${href(context, "/failed/delete")}">Delete</button></td>` : ""}
</tr>`,
  )}</tbody></table></div>`;
}

/** Tabs linking to each state of a job listing. */
export function stateTabs(
  context: PageContext,
  path: string,
  current: JobState,
  params: Record<string, string | undefined>,
): SafeHtml {
  return html`<nav class="tabs" aria-label="Job states"><ul>${STATES.map(
    (state) =>
      html`<li><a href="${href(context, path, { ...params, state })}"${state === current ? html` aria-current="page"` : ""}>${stateBadge(state)}</a></li>`,
  )}</ul></nav>`;
}
