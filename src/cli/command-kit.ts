import { Option, type Command } from "commander";
import type { FirmQueue } from "../firm-queue.js";

/** What the command files borrow from the main CLI: shared options and instance loading. */
export interface CliHelpers {
  readonly commonOptions: () => Option[];
  readonly firmFor: (options: never) => Promise<FirmQueue>;
}

/** `--json`, the flag every listing and action takes for scripts. */
export function jsonOption(): Option {
  return new Option("--json", "print JSON for scripts instead of text for people");
}

/** `--yes`, which destructive commands need when there is no terminal to ask on. */
export function yesOption(): Option {
  return new Option("-y, --yes", "go ahead without asking (needed when not on a terminal)");
}

/** Add the shared options (database URL, table prefix, job modules, log format) to `command`. */
export function withCommonOptions(command: Command, helpers: CliHelpers): Command {
  for (const option of helpers.commonOptions()) command.addOption(option);
  return command;
}

/** Run `work` with the command's FirmQueue, closing it afterwards whatever happens. */
export async function withFirm<T>(
  helpers: CliHelpers,
  flags: object,
  work: (firm: FirmQueue) => Promise<T>,
): Promise<T> {
  const firm = await helpers.firmFor(flags as never);
  try {
    return await work(firm);
  } finally {
    await firm.close();
  }
}
