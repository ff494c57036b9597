import { Option } from "commander";

/** `--log-format`: how the default logger writes, for every command that logs. */
export function logFormatOption(): Option {
  return new Option(
    "--log-format <format>",
    "text (default) or json (one object per line) for firm-queue's log lines on stderr (default: env FIRM_QUEUE_LOG_FORMAT)",
  ).choices(["text", "json"]);
}

/** `--log-job-outcomes`: an info line per finished job (commands that run jobs). */
export function logJobOutcomesOption(): Option {
  return new Option(
    "--log-job-outcomes",
    "log one info line per finished job; failures and retries are always logged (default: env FIRM_QUEUE_LOG_JOB_OUTCOMES)",
  );
}

/**
 * Put the log flags in the environment before the command loads the job modules, the way the
 * database URL is: the FirmQueue those modules create reads them there, and fork-mode children
 * inherit them.
 */
export function applyLogFlags(flags: { readonly logFormat?: unknown; readonly logJobOutcomes?: unknown }): void {
  if (typeof flags.logFormat === "string") process.env.FIRM_QUEUE_LOG_FORMAT = flags.logFormat;
  if (flags.logJobOutcomes === true) process.env.FIRM_QUEUE_LOG_JOB_OUTCOMES = "true";
}
