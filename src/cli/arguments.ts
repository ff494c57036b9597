import { InvalidArgumentError } from "commander";
import { wholeNumberArgument } from "../option-checks.js";
import type { Duration } from "../duration.js";

/** Commander parser for a count flag (`--limit`, `--concurrency`): a whole number of at least 1. */
export function countArgument(text: string): number {
  try {
    return wholeNumberArgument(text, "the value");
  } catch {
    // Commander prints its own "option '--x <n>' argument 'y' is invalid." before this reason.
    throw new InvalidArgumentError("must be a whole number of at least 1");
  }
}

/**
 * A duration flag as the option it feeds takes it: digits are milliseconds, anything else the
 * text itself. Typed as a Duration without being checked here: the option receiving it checks
 * it at run time, and its error names the option.
 */
export function durationFlag(text: string): Duration {
  return /^\d+$/.test(text) ? Number(text) : (text as Duration);
}
