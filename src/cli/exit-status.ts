import type { Command } from "commander";
import { FirmQueueError } from "../errors.js";
import { UsageError } from "./usage-error.js";

/** Exit statuses of every command: it worked, the operation failed, the command line was wrong. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/**
 * Make commander's own refusals (unknown option, missing argument, a value its parser rejects,
 * no command) exit with {@link EXIT.usage} instead of 1; help and version still exit 0. Call it
 * on the program before adding commands: commands copy the setting when they are created.
 */
export function exitWithUsageStatus(program: Command): Command {
  return program.exitOverride((error) => {
    // Commander has already printed its message (and the help, with showHelpAfterError).
    process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage);
  });
}

/** Print a command's error the way the CLI does and set the exit status it means. */
export function reportCommandError(error: unknown): void {
  if (error instanceof FirmQueueError) console.error(`firm-queue: ${error.message}`);
  else console.error(error);
  process.exitCode = error instanceof UsageError ? EXIT.usage : EXIT.failed;
}
