import { duration, prettyValue, utc } from "../dashboard/format.js";
import type { StoredError } from "../models/failed-execution.js";
import type { JobDetail } from "../models/job-timeline.js";
import { formatTable } from "./table.js";

/**
 * One job for people, as `firm-queue jobs show` prints it: aligned fields, then the arguments,
 * result, progress and errors as indented text, then the timeline.
 */
export function formatJobDetail(job: JobDetail, now: Date): string {
  const ago = (date: Date | null | undefined) =>
    date
      ? `${utc(date)} (${now >= date ? `${duration(now.getTime() - date.getTime())} ago` : `in ${duration(date.getTime() - now.getTime())}`})`
      : null;
  const fields: Array<[string, string | number | null | undefined]> = [
    ["id", job.id],
    ["name", job.name],
    ["queue", job.queue],
    ["state", job.state === "claimed" ? "running (claimed)" : job.state],
    ["priority", job.priority],
    ["attempts", job.attempts],
    ["unique key", job.key],
    ["concurrency key", job.concurrencyKey],
    ["created", ago(job.createdAt)],
    ["scheduled for", ago(job.scheduledAt)],
    ["finished", ago(job.finishedAt)],
    ["cancelled", ago(job.cancelledAt)],
    ["blocked until", ago(job.blockedUntil)],
    [
      "running on",
      job.claimedBy === undefined
        ? undefined
        : job.claimedBy === null
          ? "(its process is gone)"
          : `${job.claimedBy.name} (process ${job.claimedBy.id}, pid ${job.claimedBy.pid} on ${job.claimedBy.hostname})`,
    ],
    ["recurring task", job.recurring ? `${job.recurring.taskKey}, tick of ${utc(job.recurring.runAt)}` : undefined],
    [
      "batch",
      job.batch ? `${job.batch.id} (${job.batch.state})${job.batch.callback ? ", its callback" : ""}` : undefined,
    ],
    ["dependencies", related(job.dependencies, job.dependencyCount)],
    ["dependents", related(job.dependents, job.dependentCount)],
  ];
  const shown = fields.filter(([, value]) => value !== undefined && value !== null);
  const width = Math.max(...shown.map(([label]) => label.length));
  const lines = shown.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${value}`);
  lines.push("", "arguments:", indent(prettyValue(job.arguments)));
  if ("result" in job) lines.push("", "result:", indent(prettyValue(job.result)));
  if ("progress" in job) lines.push("", "progress:", indent(prettyValue(job.progress)));
  if (job.error) lines.push("", "error:", indent(errorText(job.error)));
  if (job.lastError && job.lastError !== job.error && !job.error)
    lines.push("", "last failed attempt:", indent(errorText(job.lastError)));
  lines.push(
    "",
    "timeline:",
    indent(
      formatTable(
        ["AT (UTC)", "EVENT", "DETAIL"],
        job.timeline.map((event) => [event.at.toISOString().slice(0, 23), event.kind, event.detail ?? ""]),
      ),
    ),
  );
  return lines.join("\n");
}

function errorText(error: StoredError): string {
  return error.stack ?? `${error.name}: ${error.message}`;
}

/** Related jobs on one line: `2: 41 resize finished, 42 resize ready`, with how many more when capped. */
function related(jobs: JobDetail["dependencies"], total: number): string | undefined {
  if (total === 0) return undefined;
  const shown = jobs
    .slice(0, 10)
    .map((job) => `${job.id} ${job.name} ${job.state}`)
    .join(", ");
  return `${total}: ${shown}${total > 10 ? `, … ${total - Math.min(10, jobs.length)} more` : ""}`;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}
