import { durationFlag } from "./arguments.js";
import { type Command, Option } from "commander";
import { jsonOption, withCommonOptions, withFirm } from "./command-kit.js";
import type { CliHelpers } from "./command-kit.js";
import { formatTable, toJson } from "./table.js";
import { duration } from "../dashboard/format.js";
import type { ProcessDetail } from "../models/process-listing.js";

interface ProcessFlags {
  readonly aliveThreshold: string;
  readonly json?: boolean;
}

/** `--alive-threshold`, shared by the commands that show processes. */
export function aliveThresholdOption(): Option {
  return new Option(
    "--alive-threshold <duration>",
    "a process whose last heartbeat is older than this is shown as stale (use your processAliveThreshold)",
  ).default("5m");
}

/** `firm-queue processes list`: what the dashboard's processes page shows. */
export function registerProcessesCommands(program: Command, helpers: CliHelpers): Command {
  const processes = program
    .command("processes")
    .description("See the registered supervisors, workers, dispatchers and schedulers.");
  withCommonOptions(processes.command("list"), helpers)
    .description(
      "Every registered process, supervisors first: kind, name, host, pid, queues, last heartbeat (stale past " +
        "--alive-threshold) and the jobs it is running.",
    )
    .addOption(aliveThresholdOption())
    .addOption(jsonOption())
    .action((flags: ProcessFlags) =>
      withFirm(helpers, flags, async (firm) => {
        const list = await firm.inspect.processes({ aliveThreshold: durationFlag(flags.aliveThreshold) });
        console.log(flags.json ? toJson(list) : processTable(list, new Date()));
      }),
    );
  return processes;
}

/** Processes as a table, each with its supervisor's id, heartbeat age and running jobs. */
export function processTable(list: readonly ProcessDetail[], now: Date): string {
  if (list.length === 0) return "No process is registered: nothing is running jobs.";
  return formatTable(
    [
      "ID",
      "KIND",
      "NAME",
      "HOST",
      { title: "PID", right: true },
      "SUPERVISOR",
      "QUEUES",
      "HEARTBEAT",
      "STATUS",
      "RUNNING",
    ],
    list.map((process) => [
      process.id,
      process.kind,
      process.name,
      process.hostname,
      process.pid,
      process.supervisorId ?? "-",
      describeQueues(process.metadata),
      `${duration(now.getTime() - process.lastHeartbeatAt.getTime())} ago`,
      process.stale ? "stale" : "alive",
      process.runningJobs.length === 0
        ? "-"
        : `${process.runningJobs.length}: ${process.runningJobs
            .slice(0, 5)
            .map((job) => `#${job.id} ${job.name}`)
            .join(", ")}${process.runningJobs.length > 5 ? ", …" : ""}`,
    ]),
  );
}

function describeQueues(metadata: Readonly<Record<string, unknown>>): string {
  const queues = metadata.queues;
  if (queues === undefined) return "-";
  const text = Array.isArray(queues) ? queues.join(",") : String(queues);
  return typeof metadata.concurrency === "number" ? `${text} (x${metadata.concurrency})` : text;
}
