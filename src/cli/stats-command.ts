import { type Command, Option } from "commander";
import { countArgument } from "./arguments.js";
import { jsonOption, withCommonOptions, withFirm } from "./command-kit.js";
import type { CliHelpers } from "./command-kit.js";
import { aliveThresholdOption, processTable } from "./processes-command.js";
import { failuresTable, queueTable } from "./queue-tables.js";
import { takeSnapshot, type QueueSnapshot } from "./queue-snapshot.js";
import { formatTable, toJson } from "./table.js";
import { count, duration } from "../dashboard/format.js";

interface StatsFlags {
  readonly aliveThreshold: string;
  readonly failures: number;
  readonly json?: boolean;
}

/** `firm-queue stats`: the state of the whole queue on one screen. */
export function registerStatsCommand(program: Command, helpers: CliHelpers): void {
  withCommonOptions(program.command("stats"), helpers)
    .description(
      "One screen: totals and backlog, the oldest ready job's wait, jobs finished and failed per second and per " +
        "minute, every queue, the newest failures and the processes.",
    )
    .addOption(aliveThresholdOption())
    .addOption(new Option("--failures <n>", "newest failed jobs shown").argParser(countArgument).default(5))
    .addOption(jsonOption())
    .action((flags: StatsFlags) =>
      withFirm(helpers, flags, async (firm) => {
        const snapshot = await takeSnapshot(firm, { aliveThreshold: flags.aliveThreshold, failures: flags.failures });
        console.log(flags.json ? toJson(snapshot) : formatStats(snapshot));
      }),
    );
}

/** A snapshot as text: sections of totals, rates, queues, failures and processes. */
export function formatStats(snapshot: QueueSnapshot): string {
  const { totals, rates } = snapshot;
  const perMinute = (value: number) => (value >= 10 ? String(Math.round(value)) : value.toFixed(1));
  const sections = [
    `firm-queue at ${snapshot.at.toISOString().slice(0, 19)}Z`,
    "",
    `backlog ${count(totals.backlog)} (ready ${count(totals.ready)}, scheduled ${count(totals.scheduled)}, blocked ${count(totals.blocked)})  ` +
      `running ${count(totals.running)}  failed ${count(totals.failed)}  latency ${totals.ready > 0 ? duration(totals.latency) : "-"}`,
    "",
    formatTable(
      ["RATE", { title: "FINISHED", right: true }, { title: "FAILED", right: true }],
      [
        ["per second, last 10 s", rates.perSecond.finished.toFixed(1), rates.perSecond.failed.toFixed(1)],
        ["per minute, this minute", rates.lastMinute.finished, rates.lastMinute.failed],
        [
          "per minute, last 5 min",
          perMinute(rates.last5Minutes.finishedPerMinute),
          perMinute(rates.last5Minutes.failedPerMinute),
        ],
        ["total, last hour", count(rates.lastHour.finished), count(rates.lastHour.failed)],
      ],
    ),
    "",
    queueTable(snapshot.queues, { rates: rates.perQueue }),
    "",
    failuresTable(snapshot.recentFailures, {
      title: "FAILED AT (UTC)",
      of: (job) => job.since.toISOString().slice(0, 19),
    }),
    "",
    processTable(snapshot.processes, snapshot.at),
  ];
  return sections.join("\n");
}
