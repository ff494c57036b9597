import { countArgument } from "./arguments.js";
import { type Command, Option } from "commander";
import { UsageError } from "./usage-error.js";
import { type CliHelpers, yesOption } from "./command-kit.js";
import { EXIT } from "./exit-status.js";
import { checkConsent, confirmed, progressBar } from "./terminal.js";
import type { FirmQueue } from "../firm-queue.js";
import type { FailedJobInfo } from "../lifecycle/failed-jobs.js";

export type { CliHelpers } from "./command-kit.js";

interface FilterFlags {
  readonly name?: string;
  readonly queue?: string;
}

interface ChangeFlags extends FilterFlags {
  readonly all?: boolean;
  readonly batchSize: number;
  readonly yes?: boolean;
}

/** `firm-queue failed list|retry|delete`: see and act on jobs that ran out of attempts. */
export function registerFailedCommands(program: Command, helpers: CliHelpers): void {
  const failed = program
    .command("failed")
    .description("See, retry and delete failed jobs (jobs that ran out of attempts).");

  withCommon(failed.command("list"), helpers)
    .description("List failed jobs, oldest first, with the error that failed each.")
    .addOption(new Option("--name <job>", "only jobs of this name"))
    .addOption(new Option("--queue <queue>", "only jobs of this queue"))
    .addOption(new Option("--limit <n>", "most jobs shown").argParser(countArgument).default(50))
    .addOption(new Option("--after <id>", "only jobs with a larger id (next page)").argParser(countArgument))
    .addOption(new Option("--json", "one JSON object per line instead of a table"))
    .action(async (flags: FilterFlags & { limit: number; after?: number; json?: boolean }) => {
      await withFirm(helpers, flags, async (firm) => {
        const filter = { ...(flags.name ? { name: flags.name } : {}), ...(flags.queue ? { queue: flags.queue } : {}) };
        const jobs = await firm.failedJobs.list({
          ...filter,
          limit: flags.limit,
          ...(flags.after ? { afterId: flags.after } : {}),
        });
        if (flags.json) {
          for (const job of jobs) console.log(JSON.stringify(job));
          return;
        }
        const total = await firm.failedJobs.count(filter);
        console.log(
          total === 0
            ? "No failed jobs."
            : `${total} failed job(s)${jobs.length < total ? `, showing ${jobs.length}` : ""}:`,
        );
        if (jobs.length > 0) console.log(formatTable(jobs));
      });
    });

  changeCommand(
    failed,
    helpers,
    "retry",
    "Retried",
    "Send failed jobs back to their queues with attempts reset.",
    false,
    (firm, ids) => firm.failedJobs.retry(ids),
    (firm, options) => firm.failedJobs.retryAll(options),
  );
  changeCommand(
    failed,
    helpers,
    "delete",
    "Deleted",
    "Delete failed jobs for good. A job that is running is refused. With --all it asks first on a terminal and needs --yes otherwise. (Old name: discard.)",
    true,
    (firm, ids) => firm.failedJobs.delete(ids),
    (firm, options) => firm.failedJobs.deleteAll(options),
  ).alias("discard");
}

type AllOptions = Parameters<FirmQueue["failedJobs"]["retryAll"]>[0] & object;

function changeCommand(
  failed: Command,
  helpers: CliHelpers,
  verb: string,
  past: string,
  description: string,
  destructive: boolean,
  byIds: (firm: FirmQueue, ids: number[]) => Promise<number>,
  all: (firm: FirmQueue, options: AllOptions) => Promise<number>,
): Command {
  const command = withCommon(failed.command(verb), helpers);
  if (destructive) command.addOption(yesOption());
  return command
    .description(`${description} Give job ids, or --all (optionally narrowed by --name / --queue).`)
    .argument("[ids...]", "ids of failed jobs")
    .addOption(new Option("--all", "every failed job (of --name / --queue), in batches"))
    .addOption(new Option("--name <job>", "with --all: only jobs of this name"))
    .addOption(new Option("--queue <queue>", "with --all: only jobs of this queue"))
    .addOption(new Option("--batch-size <n>", "with --all: jobs per transaction").argParser(countArgument).default(500))
    .action(async (idTexts: string[], flags: ChangeFlags) => {
      const command = `failed ${verb}`;
      const ids = idTexts.map((text) => jobIdArgument(text, command));
      if (flags.all && ids.length > 0) throw new UsageError(command, "give job ids or --all, not both");
      if (!flags.all && ids.length === 0) throw new UsageError(command, "give the ids of the jobs, or --all");
      if (!flags.all && (flags.name || flags.queue)) throw new UsageError(command, "--name and --queue go with --all");
      if (destructive && flags.all) checkConsent(command, flags.yes);
      await withFirm(helpers, flags, async (firm) => {
        if (!flags.all) {
          const count = await byIds(firm, ids);
          console.log(`${past} ${count} job(s): ${ids.join(", ")}`);
          return;
        }
        const filter = { ...(flags.name ? { name: flags.name } : {}), ...(flags.queue ? { queue: flags.queue } : {}) };
        const matching = await firm.failedJobs.count(filter);
        const question = `${verb === "delete" ? "Delete" : "Retry"} ${matching} failed job(s)${describeFilter(filter)}?`;
        if (destructive && !(await confirmed(command, question, flags.yes))) {
          console.error("Nothing was changed.");
          process.exitCode = EXIT.failed;
          return;
        }
        const bar = progressBar(past, matching);
        const count = await all(firm, {
          ...filter,
          batchSize: flags.batchSize,
          onBatch: ({ batch, total }) => {
            bar.advance(batch);
            if (!bar.shown) console.log(`${past} ${batch} job(s) in this batch, ${total} so far`);
          },
        });
        bar.stop();
        console.log(count === 0 ? "No failed jobs matched." : `${past} ${count} failed job(s).`);
      });
    });
}

function describeFilter(filter: FilterFlags): string {
  const parts = [filter.name ? `named ${filter.name}` : "", filter.queue ? `of queue ${filter.queue}` : ""];
  return parts.some(Boolean) ? ` ${parts.filter(Boolean).join(" ")}` : "";
}

function withCommon(command: Command, helpers: CliHelpers): Command {
  for (const option of helpers.commonOptions()) command.addOption(option);
  return command;
}

async function withFirm(helpers: CliHelpers, flags: object, work: (firm: FirmQueue) => Promise<void>): Promise<void> {
  const firm = await helpers.firmFor(flags as never);
  try {
    await work(firm);
  } finally {
    await firm.close();
  }
}

/** A plain-text table, the error cut to its first line so each job stays on one row. */
function formatTable(jobs: readonly FailedJobInfo[]): string {
  const rows = [
    ["ID", "NAME", "QUEUE", "ATTEMPTS", "FAILED AT", "ERROR"],
    ...jobs.map((job) => [
      String(job.id),
      job.name,
      job.queue,
      String(job.attempts),
      job.failedAt.toISOString(),
      `${job.error.name}: ${job.error.message.split("\n", 1)[0]}`,
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  "),
    )
    .join("\n");
}

/** A job id given on the command line to `command`; anything else is a {@link UsageError}. */
export function jobIdArgument(text: string, command: string): number {
  const id = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(id) || id < 1)
    throw new UsageError(command, `"${text}" is not a job id`);
  return id;
}
