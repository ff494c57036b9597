import { type Command, Option } from "commander";
import { countArgument } from "./arguments.js";
import { FirmQueueError } from "../errors.js";
import type { FirmQueue } from "../firm-queue.js";
import { jobIdArgument, type CliHelpers } from "./failed-command.js";

interface CancelFlags {
  readonly name?: string;
  readonly queue?: string;
  readonly key?: string;
  readonly batchSize: number;
}

/** `firm-queue jobs cancel`: cancel jobs by id, or every unended job of a queue, name and/or key. */
export function registerJobsCommands(program: Command, helpers: CliHelpers): void {
  const jobs = program.command("jobs").description("Act on jobs by id or filter.");
  const cancel = jobs
    .command("cancel")
    .description(
      "Cancel jobs: give job ids, or --queue / --name / --key (all given must match). A waiting job ends " +
        "cancelled at once; a running one when its worker hears of it (about a second).",
    )
    .argument("[ids...]", "ids of jobs to cancel")
    .addOption(new Option("--queue <queue>", "every unended job of this queue"))
    .addOption(new Option("--name <job>", "every unended job of this name"))
    .addOption(new Option("--key <key>", "every unended job with this unique key"))
    .addOption(
      new Option("--batch-size <n>", "with a filter: jobs per transaction").argParser(countArgument).default(500),
    );
  for (const option of helpers.commonOptions()) cancel.addOption(option);
  cancel.action(async (idTexts: string[], flags: CancelFlags) => {
    const ids = idTexts.map(jobIdArgument);
    const filtered = flags.queue !== undefined || flags.name !== undefined || flags.key !== undefined;
    if (filtered && ids.length > 0) throw new FirmQueueError("jobs cancel: give job ids or a filter, not both");
    if (!filtered && ids.length === 0)
      throw new FirmQueueError("jobs cancel: give the ids of the jobs, or --queue / --name / --key");
    const firm = await helpers.firmFor(flags as never);
    try {
      if (filtered) {
        const count = await firm.jobs.cancelAll({
          ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
          ...(flags.name !== undefined ? { name: flags.name } : {}),
          ...(flags.key !== undefined ? { key: flags.key } : {}),
          batchSize: flags.batchSize,
        });
        console.log(count === 0 ? "No job matched." : `Cancelled ${count} job(s).`);
        return;
      }
      await cancelByIds(firm, ids);
    } finally {
      await firm.close();
    }
  });
}

/** Cancel each id and print what became of it, then the count. */
async function cancelByIds(firm: FirmQueue, ids: readonly number[]): Promise<void> {
  let count = 0;
  for (const id of ids) {
    const outcome = await firm.jobs.cancel(id);
    if (outcome !== "ended") count++;
    console.log(
      `job ${id}: ${outcome === "cancelling" ? "running; its worker will stop it" : outcome === "ended" ? "had already ended" : "cancelled"}`,
    );
  }
  console.log(`Cancelled ${count} job(s).`);
}
