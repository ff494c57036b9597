import { type Command, Option } from "commander";
import { countArgument } from "./arguments.js";
import { jsonOption, withCommonOptions, withFirm, yesOption } from "./command-kit.js";
import type { CliHelpers } from "./command-kit.js";
import { EXIT } from "./exit-status.js";
import { toJson } from "./table.js";
import { checkConsent, confirmed, progressBar } from "./terminal.js";
import { count } from "../dashboard/format.js";
import { queueTable } from "./queue-tables.js";

interface JsonFlags {
  readonly json?: boolean;
}

interface ClearFlags extends JsonFlags {
  readonly yes?: boolean;
  readonly batchSize: number;
}

/**
 * `firm-queue queues list|pause|resume|clear`: what the dashboard's queue pages do. Returns the
 * `queues` command so other queue commands can be added to it.
 */
export function registerQueuesCommands(program: Command, helpers: CliHelpers): Command {
  const queues = program
    .command("queues")
    .description("See queues, pause and resume them, rate limit them, clear their waiting jobs.");

  withCommonOptions(queues.command("list"), helpers)
    .description(
      "Every queue with unfinished jobs or a pause: jobs by state, latency (how long the oldest ready job has waited), paused or not.",
    )
    .addOption(jsonOption())
    .action((flags: JsonFlags) =>
      withFirm(helpers, flags, async (firm) => {
        const list = await firm.inspect.queues();
        console.log(flags.json ? toJson(list) : queueTable(list));
      }),
    );

  for (const [verb, past, description] of [
    ["pause", "Paused", "Stop workers from claiming jobs of a queue (enqueueing goes on). Running jobs finish."],
    ["resume", "Resumed", "Let workers claim jobs of a paused queue again."],
  ] as const) {
    withCommonOptions(queues.command(verb), helpers)
      .description(description)
      .argument("<name>", "the queue")
      .addOption(jsonOption())
      .action((name: string, flags: JsonFlags) =>
        withFirm(helpers, flags, async (firm) => {
          await (verb === "pause" ? firm.queues.pause(name) : firm.queues.resume(name));
          console.log(flags.json ? toJson({ queue: name, paused: verb === "pause" }) : `${past} queue ${name}.`);
        }),
      );
  }

  withCommonOptions(queues.command("clear"), helpers)
    .description(
      "Delete the ready jobs of a queue and those waiting for a rate-limit budget for good, in batches " +
        "(scheduled, blocked, running and failed jobs stay). " +
        "Asks first on a terminal; needs --yes otherwise. Shows a progress bar on a terminal.",
    )
    .argument("<name>", "the queue")
    .addOption(yesOption())
    .addOption(new Option("--batch-size <n>", "jobs deleted per transaction").argParser(countArgument).default(500))
    .addOption(jsonOption())
    .action((name: string, flags: ClearFlags) => {
      checkConsent("queues clear", flags.yes);
      return withFirm(helpers, flags, async (firm) => {
        const counts = (await firm.inspect.queues()).find((queue) => queue.name === name);
        const ready = counts?.ready ?? 0;
        const throttled = counts?.throttled ?? 0;
        const what = `${count(ready)} ready job(s)${throttled > 0 ? ` and ${count(throttled)} waiting for budget` : ""}`;
        if (!(await confirmed("queues clear", `Delete the ${what} of queue ${name}?`, flags.yes))) {
          console.error("Nothing was cleared.");
          process.exitCode = EXIT.failed;
          return;
        }
        const bar = progressBar("Deleted", ready + throttled);
        const cleared = await firm.queues.clear(name, {
          batchSize: flags.batchSize,
          onBatch: ({ batch }) => bar.advance(batch),
        });
        bar.stop();
        console.log(
          flags.json ? toJson({ queue: name, cleared }) : `Cleared ${cleared} waiting job(s) from queue ${name}.`,
        );
      });
    });
  return queues;
}
