import type { RecurringTaskInfo } from "../facade/recurring-operations.js";
import { DEFAULT_TIMEZONE } from "../definitions/schedule.js";

const COLUMNS = ["KEY", "KIND", "JOB", "SCHEDULE", "QUEUE", "PRIORITY", "NEXT RUN (UTC)", "LAST RUN (UTC)"] as const;

/**
 * Recurring tasks as an aligned text table, one task a line, for `firm-queue recurring`. Times
 * are ISO-8601 UTC so lines from different hosts compare; a task's own zone is shown with its
 * schedule. A queue or priority of "-" means the job definition's.
 */
export function formatRecurringTasks(tasks: readonly RecurringTaskInfo[]): string {
  if (tasks.length === 0) return "No recurring tasks.";
  const rows = tasks.map((task) => [
    task.key,
    task.static ? "static" : "dynamic",
    task.job,
    task.timezone === DEFAULT_TIMEZONE ? task.schedule : `${task.schedule} (${task.timezone})`,
    task.queue ?? "-",
    task.priority === null ? "-" : String(task.priority),
    task.problem ? `unusable: ${task.problem}` : (task.nextRunAt?.toISOString() ?? "never"),
    task.lastRunAt?.toISOString() ?? "never",
  ]);
  const widths = COLUMNS.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  return [line(COLUMNS), ...rows.map(line)].join("\n");
}
