import { postForm, stateBadge } from "../components.js";
import { scheduleInWords } from "../cron-words.js";
import { href, type PageContext } from "../context.js";
import { shortValue, timeAgo, utc } from "../format.js";
import { html } from "../html.js";
import type { Page } from "../layout.js";

/** Recurring tasks: schedule in words and cron, zone, next run, latest runs and their jobs; run now. */
export async function recurringPage(context: PageContext): Promise<Page> {
  const tasks = await context.firm.inspect.recurringTasks({ runs: 5 });
  const body = html`<div data-live id="recurring">${
    tasks.length === 0
      ? html`<p class="empty">No recurring tasks. Declare them in <code>start({ recurring })</code> or add one with <code>firm.recurring.schedule()</code>.</p>`
      : html`<div class="table-wrap"><table class="recurring">
<thead><tr><th scope="col">Task</th><th scope="col">Job</th><th scope="col">Schedule</th><th scope="col">Next run</th><th scope="col">Latest runs</th>${context.readOnly ? "" : html`<th scope="col">Run</th>`}</tr></thead>
<tbody>${tasks.map((task) => {
          const words = scheduleInWords(task.schedule);
          return html`<tr>
<th scope="row"><span class="name">${task.key}</span> <span class="badge">${task.static ? "static" : "dynamic"}</span>${task.description ? html`<div class="muted">${task.description}</div>` : ""}</th>
<td><span class="name">${task.job}</span><div><code class="args">${shortValue(task.args, 60)}</code></div><div class="muted">queue ${task.queue ?? "(job's)"}, priority ${task.priority ?? "(job's)"}</div></td>
<td>${words ? html`${words}<div><code>${task.schedule}</code></div>` : html`<code>${task.schedule}</code>`}<div class="muted">${task.timezone}</div></td>
<td>${task.problem ? html`<span class="badge stale">unusable</span> ${task.problem}` : task.nextRunAt ? html`${timeAgo(task.nextRunAt, context.now)}<div class="muted">${utc(task.nextRunAt)}</div>` : "never"}</td>
<td>${task.runs.length === 0 ? html`<span class="muted">none yet</span>` : html`<ul class="runs">${task.runs.map((run) => html`<li>${run.state === "deleted" ? html`#${run.jobId} ${stateBadge("deleted")}` : html`<a href="${href(context, `/jobs/${run.jobId}`)}">#${run.jobId}</a> ${stateBadge(run.state)}`} ${timeAgo(run.runAt, context.now)}</li>`)}</ul>`}</td>
${context.readOnly ? "" : html`<td>${postForm(context, `/recurring/${encodeURIComponent(task.key)}/run`, html`<button type="submit" aria-label="Run ${task.key} now">Run now</button>`)}</td>`}
</tr>`;
        })}</tbody></table></div>`
  }</div>`;
  return { title: "Recurring tasks", section: "/recurring", body };
}
