import type { Command } from "commander";
import { jsonOption, withCommonOptions, withFirm } from "./command-kit.js";
import type { CliHelpers } from "./command-kit.js";
import { toJson } from "./table.js";
import { UsageError } from "./usage-error.js";
import { checkRateLimit } from "../definitions/rate-limit-options.js";
import { ConfigurationError } from "../errors.js";

interface JsonFlags {
  readonly json?: boolean;
}

/** A rate limit typed as `LIMIT/PERIOD`, such as `10/1s` or `600/1m`. */
export interface TypedRateLimit {
  readonly limit: number;
  readonly period: string | number;
  readonly periodMs: number;
}

/**
 * Read `10/1s` (a whole number of starts, a slash, a period: a duration such as `1s`, `500ms`,
 * `1m`, or milliseconds); anything else is a {@link UsageError} of `command`.
 */
export function parseTypedRateLimit(command: string, text: string): TypedRateLimit {
  const match = /^\s*(\d+)\s*\/\s*(\S+)\s*$/.exec(text);
  if (match === null)
    throw new UsageError(command, `"${text}" is not a rate limit: give LIMIT/PERIOD, such as 10/1s or 600/1m`);
  const limit = Number(match[1]);
  const period = /^\d+$/.test(match[2]!) ? Number(match[2]) : match[2]!;
  try {
    const { periodMs } = checkRateLimit({ limit, period }, "rate limit");
    return { limit, period, periodMs };
  } catch (error) {
    if (error instanceof ConfigurationError) throw new UsageError(command, `"${text}": ${error.message}`);
    throw error;
  }
}

/** `firm-queue queues limit NAME 10/1s` and `firm-queue queues unlimit NAME`, on the `queues` command. */
export function registerQueueLimitCommands(queues: Command, helpers: CliHelpers): void {
  withCommonOptions(queues.command("limit"), helpers)
    .description(
      "Rate limit a queue: at most LIMIT job starts in any window of PERIOD (such as 10/1s), across every worker " +
        "and host. Running workers obey it within one polling interval. Setting it again changes it.",
    )
    .argument("<name>", "the queue")
    .argument("<rate>", "LIMIT/PERIOD, such as 10/1s, 600/1m or 5/500ms")
    .addOption(jsonOption())
    .action((name: string, rate: string, flags: JsonFlags) => {
      const { limit, periodMs } = parseTypedRateLimit("queues limit", rate);
      return withFirm(helpers, flags, async (firm) => {
        await firm.queues.setRateLimit(name, { limit, period: periodMs });
        console.log(
          flags.json
            ? toJson({ queue: name, limit, periodMs })
            : `Queue ${name} is limited to ${limit} start(s) per ${periodMs} ms.`,
        );
      });
    });

  withCommonOptions(queues.command("unlimit"), helpers)
    .description("Remove a queue's rate limit (running workers see it within one polling interval).")
    .argument("<name>", "the queue")
    .addOption(jsonOption())
    .action((name: string, flags: JsonFlags) =>
      withFirm(helpers, flags, async (firm) => {
        const removed = await firm.queues.clearRateLimit(name);
        console.log(
          flags.json
            ? toJson({ queue: name, removed })
            : removed
              ? `Removed the rate limit of queue ${name}.`
              : `Queue ${name} had no rate limit; nothing changed.`,
        );
      }),
    );
}
