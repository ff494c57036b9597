import { type Command, Option } from "commander";
import { countArgument } from "./arguments.js";
import { jsonOption, withCommonOptions, withFirm, yesOption } from "./command-kit.js";
import { EXIT } from "./exit-status.js";
import type { FirmQueue } from "../firm-queue.js";
import { jobIdArgument } from "./failed-command.js";
import type { CliHelpers } from "./command-kit.js";
import { registerJobsEnqueueCommand } from "./jobs-enqueue-command.js";
import { registerJobsListCommands } from "./jobs-list-command.js";
import { toJson } from "./table.js";
import { checkConsent, confirmed, progressBar } from "./terminal.js";
import { UsageError } from "./usage-error.js";

interface CancelFlags {
  readonly name?: string;
  readonly queue?: string;
  readonly key?: string;
  readonly batchSize: number;
  readonly yes?: boolean;
  readonly json?: boolean;
}

/** `firm-queue jobs list|show|retry|enqueue|cancel`: find, look at and act on jobs. */
export function registerJobsCommands(program: Command, helpers: CliHelpers): Command {
  const jobs = program.command("jobs").description("List, show, enqueue, retry and cancel jobs.");
  registerJobsListCommands(jobs, helpers);
  registerJobsEnqueueCommand(jobs, helpers);
  withCommonOptions(jobs.command("retry"), helpers)
    .description(
      "Send failed jobs back to their queues with attempts reset (every id must be a failed job, or nothing changes).",
    )
    .argument("<ids...>", "ids of failed jobs")
    .addOption(jsonOption())
    .action((idTexts: string[], flags: { json?: boolean }) => {
      const ids = idTexts.map((text) => jobIdArgument(text, "jobs retry"));
      return withFirm(helpers, flags, async (firm) => {
        const retried = await firm.failedJobs.retry(ids);
        console.log(flags.json ? toJson({ retried, ids }) : `Retried ${retried} job(s): ${ids.join(", ")}`);
      });
    });
  const cancel = withCommonOptions(jobs.command("cancel"), helpers)
    .description(
      "Cancel jobs: give job ids, or --queue / --name / --key (all given must match). A waiting job ends " +
        "cancelled at once; a running one when its worker hears of it (about a second). Cancelling by filter " +
        "asks first on a terminal and needs --yes otherwise.",
    )
    .argument("[ids...]", "ids of jobs to cancel")
    .addOption(new Option("--queue <queue>", "every unended job of this queue"))
    .addOption(new Option("--name <job>", "every unended job of this name"))
    .addOption(new Option("--key <key>", "every unended job with this unique key"))
    .addOption(
      new Option("--batch-size <n>", "with a filter: jobs per transaction").argParser(countArgument).default(500),
    )
    .addOption(yesOption())
    .addOption(jsonOption());
  cancel.action(async (idTexts: string[], flags: CancelFlags) => {
    const ids = idTexts.map((text) => jobIdArgument(text, "jobs cancel"));
    const filtered = flags.queue !== undefined || flags.name !== undefined || flags.key !== undefined;
    if (filtered && ids.length > 0) throw new UsageError("jobs cancel", "give job ids or a filter, not both");
    if (!filtered && ids.length === 0)
      throw new UsageError("jobs cancel", "give the ids of the jobs, or --queue / --name / --key");
    if (filtered) checkConsent("jobs cancel", flags.yes);
    await withFirm(helpers, flags, (firm) => (filtered ? cancelByFilter(firm, flags) : cancelByIds(firm, ids, flags)));
  });
  return jobs;
}

/** Cancel every unended job matching the flags, after asking, with a progress bar on a terminal. */
async function cancelByFilter(firm: FirmQueue, flags: CancelFlags): Promise<void> {
  const filter = {
    ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
    ...(flags.name !== undefined ? { name: flags.name } : {}),
    ...(flags.key !== undefined ? { key: flags.key } : {}),
  };
  let matching = 0;
  for (const state of ["ready", "scheduled", "blocked", "claimed"] as const) {
    matching += (await firm.inspect.count({ ...filter, state, upTo: 1_000_000 })).count;
  }
  const described = Object.entries(filter)
    .map(([field, value]) => `${field} ${value}`)
    .join(", ");
  if (!(await confirmed("jobs cancel", `Cancel ${matching} unended job(s) with ${described}?`, flags.yes))) {
    console.error("Nothing was cancelled.");
    process.exitCode = EXIT.failed;
    return;
  }
  const bar = progressBar("Cancelled", matching);
  const count = await firm.jobs.cancelAll({
    ...filter,
    batchSize: flags.batchSize,
    onBatch: ({ batch }) => bar.advance(batch),
  });
  bar.stop();
  if (flags.json) console.log(toJson({ cancelled: count }));
  else console.log(count === 0 ? "No job matched." : `Cancelled ${count} job(s).`);
}

/** Cancel each id and print what became of it, then the count. */
async function cancelByIds(firm: FirmQueue, ids: readonly number[], flags: CancelFlags): Promise<void> {
  let count = 0;
  const outcomes: Array<{ id: number; outcome: string }> = [];
  for (const id of ids) {
    const outcome = await firm.jobs.cancel(id);
    if (outcome !== "ended") count++;
    outcomes.push({ id, outcome });
    if (!flags.json)
      console.log(
        `job ${id}: ${outcome === "cancelling" ? "running; its worker will stop it" : outcome === "ended" ? "had already ended" : "cancelled"}`,
      );
  }
  console.log(flags.json ? toJson({ cancelled: count, jobs: outcomes }) : `Cancelled ${count} job(s).`);
}
