import type { ProcessDetail } from "../../models/process-listing.js";
import { href, type PageContext } from "../context.js";
import { timeAgo, truncate } from "../format.js";
import { html, type SafeHtml } from "../html.js";
import type { Page } from "../layout.js";

/** Supervisors and the workers, dispatchers and schedulers under them, with the jobs running now. */
export async function processesPage(context: PageContext): Promise<Page> {
  const processes = await context.firm.inspect.processes({ aliveThreshold: context.aliveThresholdMs });
  const supervisors = processes.filter((process) => process.kind === "Supervisor");
  const known = new Set(supervisors.map((process) => process.id));
  const orphans = processes.filter(
    (process) => process.kind !== "Supervisor" && (process.supervisorId === null || !known.has(process.supervisorId)),
  );
  const body = html`<div data-live id="processes">
${processes.length === 0 ? html`<p class="empty">No process is registered: nothing is running jobs.</p>` : ""}
${supervisors.map(
  (supervisor) => html`<section class="supervisor">
<h2>${supervisor.kind} ${supervisor.name}</h2>
${processTable(context, [supervisor, ...processes.filter((process) => process.supervisorId === supervisor.id)])}
</section>`,
)}
${orphans.length > 0 ? html`<section><h2>Without a supervisor</h2>${processTable(context, orphans)}</section>` : ""}
</div>`;
  return { title: "Processes", section: "/processes", body };
}

function processTable(context: PageContext, processes: readonly ProcessDetail[]): SafeHtml {
  return html`<div class="table-wrap"><table class="processes">
<thead><tr><th scope="col">Kind</th><th scope="col">Name</th><th scope="col">Host</th><th scope="col">PID</th><th scope="col">Queues</th><th scope="col">Last heartbeat</th><th scope="col">Running jobs</th></tr></thead>
<tbody>${processes.map(
    (process) => html`<tr${process.stale ? html` class="stale"` : ""}>
<td>${process.kind}</td><td class="name">${process.name}</td><td>${process.hostname}</td><td>${process.pid}</td>
<td>${describeQueues(process.metadata)}</td>
<td>${timeAgo(process.lastHeartbeatAt, context.now)}${process.stale ? html` <span class="badge stale">stale</span>` : ""}</td>
<td>${process.runningJobs.length === 0 ? html`<span class="muted">—</span>` : html`<ul class="running">${process.runningJobs.map((job) => html`<li><a href="${href(context, `/jobs/${job.id}`)}">#${job.id}</a> <span class="name">${job.name}</span> ${timeAgo(job.since, context.now)}</li>`)}</ul>`}</td>
</tr>`,
  )}</tbody></table></div>`;
}

function describeQueues(metadata: Readonly<Record<string, unknown>>): string {
  const queues = metadata.queues;
  if (queues === undefined) return "—";
  const text = Array.isArray(queues) ? queues.join(", ") : String(queues);
  const concurrency = typeof metadata.concurrency === "number" ? ` (×${metadata.concurrency})` : "";
  return truncate(text, 80) + concurrency;
}
