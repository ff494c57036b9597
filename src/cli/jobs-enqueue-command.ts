import { durationFlag } from "./arguments.js";
import type { Duration } from "../duration.js";
import type { JobArguments } from "../definitions/job-definition.js";
import { type Command, InvalidArgumentError, Option } from "commander";
import { jsonOption, withCommonOptions, withFirm } from "./command-kit.js";
import type { CliHelpers } from "./command-kit.js";
import { EXIT } from "./exit-status.js";
import { toJson } from "./table.js";
import { UsageError } from "./usage-error.js";
import { toMilliseconds } from "../duration.js";
import { UndeclaredJobError } from "../errors.js";

interface EnqueueFlags {
  readonly args?: string;
  readonly queue?: string;
  readonly priority?: number;
  readonly wait?: Duration;
  readonly key?: string;
  readonly undeclared?: boolean;
  readonly json?: boolean;
}

/** `firm-queue jobs enqueue NAME --args JSON`: enqueue a job by name, as `firm.enqueue` does. */
export function registerJobsEnqueueCommand(jobs: Command, helpers: CliHelpers): void {
  withCommonOptions(jobs.command("enqueue"), helpers)
    .description(
      "Enqueue a job by name. Its declaration (from --require) gives its default queue, priority, schema and " +
        "concurrency limit; a job not declared there needs --undeclared.",
    )
    .argument("<name>", "the job's name")
    .addOption(new Option("--args <json>", "the job's arguments as JSON (default null)"))
    .addOption(new Option("--queue <queue>", "the queue, instead of the declaration's"))
    .addOption(new Option("--priority <n>", "smaller runs first, instead of the declaration's").argParser(integer))
    .addOption(new Option("--wait <duration>", 'run no earlier than this from now, e.g. "5m"').argParser(durationText))
    .addOption(new Option("--key <key>", "the job's unique key (see docs/jobs.md)"))
    .addOption(
      new Option("--undeclared", "enqueue though no loaded module declares the job: default queue and priority"),
    )
    .addOption(jsonOption())
    .action((name: string, flags: EnqueueFlags) => {
      const args = parseArguments(flags.args);
      return withFirm(helpers, flags, async (firm) => {
        const result = await firm
          .enqueue(name, args, {
            ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
            ...(flags.priority !== undefined ? { priority: flags.priority } : {}),
            ...(flags.wait !== undefined ? { wait: flags.wait } : {}),
            ...(flags.key !== undefined ? { key: flags.key } : {}),
            ...(flags.undeclared ? { undeclared: true } : {}),
          })
          .catch((error: unknown) => {
            if (!(error instanceof UndeclaredJobError)) throw error;
            const known = error.known.length > 0 ? `declared: ${error.known.join(", ")}` : "no module was loaded";
            throw new UsageError(
              "jobs enqueue",
              `no loaded module declares "${name}" (${known}); pass --require with the module that declares it, or --undeclared`,
            );
          });
        if (result.status === "dropped") process.exitCode = EXIT.failed;
        if (flags.json) return console.log(toJson(result));
        console.log(
          result.status === "created"
            ? `Enqueued job ${result.id} (${name}).`
            : result.status === "duplicate"
              ? `Not enqueued: job ${result.id} holds that unique key.`
              : result.status === "replaced"
                ? `Replaced the arguments and run time of waiting job ${result.id}, which holds that unique key.`
                : "Dropped: the job's concurrency limit has no free slot and it drops jobs on conflict.",
        );
      });
    });
}

function parseArguments(text: string | undefined): JobArguments {
  if (text === undefined) return null;
  try {
    // JSON text parses to JSON values, which are storable arguments.
    return JSON.parse(text) as JobArguments;
  } catch (error) {
    throw new UsageError("jobs enqueue", `--args is not JSON (${(error as Error).message})`);
  }
}

function integer(text: string): number {
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) throw new InvalidArgumentError("must be a whole number");
  return value;
}

/** A duration flag: digits are milliseconds, else a string such as "5m"; checked here so a bad one is a usage error. */
function durationText(text: string): Duration {
  const value = durationFlag(text);
  try {
    toMilliseconds(value, "--wait");
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return value;
}
