import type { StoredError } from "../../models/failed-execution.js";
import type { RelatedJob } from "../../models/job-relations.js";
import { postForm, stateBadge } from "../components.js";
import { href, type PageContext } from "../context.js";
import { count, prettyValue, timeAgo, utc } from "../format.js";
import { html, type SafeHtml } from "../html.js";
import type { Page } from "../layout.js";
import { PageError } from "./page-error.js";

/** One job: arguments, options, timeline, attempts, errors; retry or delete when failed. */
export async function jobPage(context: PageContext, idText: string): Promise<Page> {
  const id = Number(idText);
  if (!/^\d+$/.test(idText) || !Number.isSafeInteger(id) || id < 1)
    throw new PageError(400, `Not a job id: ${JSON.stringify(idText)}`);
  const job = await context.firm.inspect.job(id);
  if (!job) throw new PageError(404, `There is no job #${id} (finished jobs may have been cleared).`);
  const body = html`
<div data-live id="job-detail">
<dl class="facts">
<div><dt>State</dt><dd>${stateBadge(job.state)}</dd></div>
<div><dt>Name</dt><dd class="name">${job.name}</dd></div>
<div><dt>Queue</dt><dd><a href="${href(context, `/queues/${encodeURIComponent(job.queue)}`)}">${job.queue}</a></dd></div>
<div><dt>Priority</dt><dd>${job.priority}</dd></div>
<div><dt>Attempts</dt><dd>${job.attempts}</dd></div>
<div><dt>Concurrency key</dt><dd>${job.concurrencyKey ? html`<a href="${href(context, "/concurrency")}">${job.concurrencyKey}</a>` : "—"}</dd></div>
<div><dt>Enqueued</dt><dd>${utc(job.createdAt)}</dd></div>
<div><dt>Scheduled for</dt><dd>${job.scheduledAt ? utc(job.scheduledAt) : "—"}</dd></div>
${job.claimedBy ? html`<div><dt>Running on</dt><dd><a href="${href(context, "/processes")}">${job.claimedBy.kind} ${job.claimedBy.name}</a> (pid ${job.claimedBy.pid} on ${job.claimedBy.hostname})</dd></div>` : ""}
${job.recurring ? html`<div><dt>Recurring task</dt><dd><a href="${href(context, "/recurring")}">${job.recurring.taskKey}</a> run of ${utc(job.recurring.runAt)}</dd></div>` : ""}
${job.blockedUntil ? html`<div><dt>Blocked until</dt><dd>${utc(job.blockedUntil)}</dd></div>` : ""}
${job.batch ? html`<div><dt>${job.batch.callback ? "Callback of batch" : "Batch"}</dt><dd><a href="${href(context, `/batches/${job.batch.id}`)}">#${job.batch.id}</a> ${stateBadge(job.batch.state)}</dd></div>` : ""}
${job.key ? html`<div><dt>Unique key</dt><dd>${job.key}</dd></div>` : ""}
${job.cancelledAt ? html`<div><dt>${job.state === "cancelled" ? "Cancelled" : "Cancel requested"}</dt><dd>${utc(job.cancelledAt)}</dd></div>` : ""}
${"progress" in job ? html`<div><dt>Progress</dt><dd class="progress">${prettyValue(job.progress)}</dd></div>` : ""}
</dl>
${
  job.state === "failed"
    ? html`<div class="actions">${postForm(context, `/jobs/${job.id}/retry`, html`<button type="submit">Retry</button>`)}${postForm(context, `/jobs/${job.id}/delete`, html`<button type="submit" class="danger">Delete</button>`)}</div>`
    : ""
}
${relatedSection(context, "Dependencies", "job-dependencies", job.dependencies, job.dependencyCount, "it waits for")}
${relatedSection(context, "Dependents", "job-dependents", job.dependents, job.dependentCount, "waiting for it")}
<h2>Timeline</h2>
<ol class="timeline">${job.timeline.map((event) => html`<li><span class="event">${event.kind}</span> ${timeAgo(event.at, context.now)} <span class="muted">${utc(event.at)}</span>${event.detail ? html` — ${event.detail}` : ""}</li>`)}</ol>
${job.error ? errorBlock("Error that failed the job", job.error) : ""}
${job.lastError && (!job.error || job.lastError.message !== job.error.message || job.lastError.name !== job.error.name) ? errorBlock("Error of the latest failed attempt", job.lastError) : ""}
</div>
${"result" in job ? html`<h2>Result</h2><pre class="result" tabindex="0">${prettyValue(job.result)}</pre>` : ""}
<h2>Arguments</h2>
<pre class="args" tabindex="0">${prettyValue(job.arguments)}</pre>`;
  return { title: `Job #${job.id}`, section: "/jobs", body };
}

/**
 * The jobs a job waits for, or that wait for it, each linking to its page with its state now; when
 * the list is capped, how many there are in all. Nothing when there are none.
 */
function relatedSection(
  context: PageContext,
  title: string,
  id: string,
  jobs: readonly RelatedJob[],
  total: number,
  words: string,
): SafeHtml {
  if (total === 0) return html``;
  return html`<section class="related" id="${id}"><h2>${title} <span class="muted">(${count(total)})</span></h2>
${jobs.length < total ? html`<p class="muted">The first ${count(jobs.length)} of ${count(total)} jobs ${words}.</p>` : ""}
<ul class="related">${jobs.map(
    (job) =>
      html`<li>${job.state === "deleted" ? html`#${job.id}` : html`<a href="${href(context, `/jobs/${job.id}`)}">#${job.id}</a>`} <span class="name">${job.name}</span> ${stateBadge(job.state)}</li>`,
  )}</ul></section>`;
}

function errorBlock(title: string, error: StoredError): SafeHtml {
  return html`<section class="error-block"><h2>${title}</h2><p><strong class="error-name">${error.name}</strong>: <span class="error-message">${error.message}</span></p>${error.stack ? html`<pre class="stack" tabindex="0">${error.stack}</pre>` : ""}</section>`;
}
