import { count, duration } from "../dashboard/format.js";
import type { QueueSnapshot } from "./queue-snapshot.js";
import { failuresTable, queueTable } from "./queue-tables.js";
import { formatTable } from "./table.js";

/**
 * One frame of `firm-queue top`: a header, the totals and rates, the queues with their backlog,
 (and each queue's rates per second) the running jobs, the newest failures and the processes, cut to `width` × `height` so the
 * frame never scrolls the terminal. `problem`: why the latest refresh failed, shown on top.
 */
export function renderTopFrame(
  snapshot: QueueSnapshot | null,
  size: { readonly width: number; readonly height: number },
  intervalMs: number,
  problem?: string,
): string[] {
  const at = snapshot?.at ?? new Date();
  const lines = [
    `firm-queue top  ${at.toISOString().slice(0, 19)}Z  every ${duration(intervalMs)}  (q or Ctrl-C quits)`,
  ];
  if (problem) lines.push(`refresh failed: ${problem}`);
  if (snapshot) lines.push(...body(snapshot));
  else if (!problem) lines.push("", "reading…");
  return lines.slice(0, size.height).map((line) => (line.length > size.width ? line.slice(0, size.width) : line));
}

function body(snapshot: QueueSnapshot): string[] {
  const { totals, rates } = snapshot;
  const running = snapshot.processes.flatMap((process) =>
    process.runningJobs.map((job) => ({ job, process: process.name })),
  );
  const figure = (title: string) => ({ title, right: true });
  const sections: string[] = [
    "",
    `backlog ${count(totals.backlog)}  ready ${count(totals.ready)}  scheduled ${count(totals.scheduled)}  ` +
      `blocked ${count(totals.blocked)}  running ${count(totals.running)}  failed ${count(totals.failed)}  ` +
      `latency ${totals.ready > 0 ? duration(totals.latency) : "-"}`,
    `finished ${rates.perSecond.finished.toFixed(1)}/s  failed ${rates.perSecond.failed.toFixed(1)}/s (last 10 s)   ` +
      `finished ${count(rates.lastHour.finished)}  failed ${count(rates.lastHour.failed)} (last hour)`,
    "",
    queueTable(snapshot.queues, { backlog: true, rates: rates.perQueue }),
    "",
    running.length === 0
      ? "No job is running."
      : `Running (${running.length}):\n${formatTable(
          ["ID", "NAME", "QUEUE", "FOR", "PROCESS"],
          running
            .slice(0, 10)
            .map(({ job, process }) => [
              job.id,
              job.name,
              job.queue,
              duration(snapshot.at.getTime() - job.since.getTime()),
              process,
            ]),
        )}`,
    "",
    failuresTable(snapshot.recentFailures, {
      title: "AGO",
      of: (job) => duration(snapshot.at.getTime() - job.since.getTime()),
    }),
    "",
    snapshot.processes.length === 0
      ? "No process is registered."
      : formatTable(
          ["PROCESS", "KIND", "HOST", figure("PID"), "HEARTBEAT", "STATUS", figure("RUNNING")],
          snapshot.processes.map((process) => [
            process.name,
            process.kind,
            process.hostname,
            process.pid,
            `${duration(snapshot.at.getTime() - process.lastHeartbeatAt.getTime())} ago`,
            process.stale ? "stale" : "alive",
            process.runningJobs.length,
          ]),
        ),
  ];
  return sections.join("\n").split("\n");
}
