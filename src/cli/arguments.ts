import { InvalidArgumentError } from "commander";
import { wholeNumberArgument } from "../option-checks.js";

/** Commander parser for a count flag (`--limit`, `--concurrency`): a whole number of at least 1. */
export function countArgument(text: string): number {
  try {
    return wholeNumberArgument(text, "the value");
  } catch {
    // Commander prints its own "option '--x <n>' argument 'y' is invalid." before this reason.
    throw new InvalidArgumentError("must be a whole number of at least 1");
  }
}
