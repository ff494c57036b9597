import { FirmQueueError } from "../errors.js";

/**
 * The command line itself is wrong: a missing or contradictory argument, a value that cannot be
 * read, a destructive command without `--yes` where nobody can be asked. The CLI exits with
 * status 2 for it (and for commander's own usage errors), 1 when an operation fails.
 */
export class UsageError extends FirmQueueError {
  /** `command`: the command as typed (`"jobs cancel"`); `problem`: what is wrong with its arguments. */
  constructor(
    readonly command: string,
    readonly problem: string,
  ) {
    super(`${command}: ${problem}`);
  }
}
