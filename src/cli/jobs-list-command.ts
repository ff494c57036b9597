import { type Command, InvalidArgumentError, Option } from "commander";
import { countArgument } from "./arguments.js";
import { jsonOption, withCommonOptions, withFirm } from "./command-kit.js";
import { EXIT } from "./exit-status.js";
import { jobIdArgument } from "./failed-command.js";
import type { CliHelpers } from "./command-kit.js";
import { formatJobDetail } from "./job-detail.js";
import { listAllStates } from "./all-states-listing.js";
import { formatTable, toJson } from "./table.js";
import { shortValue } from "../dashboard/format.js";
import type { FirmQueue } from "../firm-queue.js";
import type { JobState } from "../models/job-info.js";
import type { JobPage, JobSummary } from "../models/job-listing.js";

/** The states a listing can show, in a job's usual order through them. */
export const JOB_STATES: readonly JobState[] = [
  "scheduled",
  "blocked",
  "ready",
  "claimed",
  "failed",
  "finished",
  "cancelled",
];

interface ListFlags {
  readonly state?: JobState;
  readonly queue?: string;
  readonly name?: string;
  readonly key?: string;
  readonly limit: number;
  readonly cursor?: string;
  readonly json?: boolean;
}

/** `firm-queue jobs list` and `jobs show`: what the dashboard's job pages show. */
export function registerJobsListCommands(jobs: Command, helpers: CliHelpers): void {
  withCommonOptions(jobs.command("list"), helpers)
    .description(
      "List jobs, newest first, matching every filter given: one page of one state with --state, of every state " +
        "(merged by id) without; --cursor for the next page.",
    )
    .addOption(new Option("--state <state>", `${JOB_STATES.join(", ")} (running is claimed)`).argParser(stateArgument))
    .addOption(new Option("--queue <queue>", "only jobs of this queue"))
    .addOption(new Option("--name <job>", "only jobs of this name"))
    .addOption(new Option("--key <key>", "only jobs enqueued with this unique key"))
    .addOption(new Option("--limit <n>", "most jobs shown, up to 500").argParser(limitArgument).default(50))
    .addOption(
      new Option("--cursor <cursor>", "the page after the one that printed this cursor (with the same filters)"),
    )
    .addOption(jsonOption())
    .action((flags: ListFlags) =>
      withFirm(helpers, flags, async (firm) => {
        const page = await listJobs(firm, flags);
        if (flags.json) return console.log(toJson(page));
        console.log(page.jobs.length === 0 ? "No jobs matched." : jobTable(page.jobs));
        if (page.nextCursor) console.log(`More: add --cursor ${page.nextCursor}`);
      }),
    );

  withCommonOptions(jobs.command("show"), helpers)
    .description(
      "Everything about one job: state, arguments, result, progress, errors, the process running it, its timeline.",
    )
    .argument("<id>", "the job's id")
    .addOption(jsonOption())
    .action((idText: string, flags: { json?: boolean }) => {
      const id = jobIdArgument(idText, "jobs show");
      return withFirm(helpers, flags, async (firm) => {
        const job = await firm.inspect.job(id);
        if (job === null) {
          console.error(`firm-queue: Job ${id} does not exist`);
          process.exitCode = EXIT.failed;
          return;
        }
        console.log(flags.json ? toJson(job) : formatJobDetail(job, new Date()));
      });
    });
}

/** The page the flags ask for: one state's listing, or every state's merged (see `all-states-listing.ts`). */
async function listJobs(firm: FirmQueue, flags: ListFlags): Promise<JobPage> {
  const filter = {
    ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
    ...(flags.name !== undefined ? { name: flags.name } : {}),
    ...(flags.key !== undefined ? { key: flags.key } : {}),
    limit: flags.limit,
  };
  if (flags.state !== undefined) {
    return firm.inspect.jobs({ ...filter, state: flags.state, cursor: flags.cursor ?? null });
  }
  return listAllStates(firm, JOB_STATES, { ...filter, cursor: flags.cursor });
}

/** Jobs as a table: the last column is the error of a failed job, the arguments of the others. */
export function jobTable(jobs: readonly JobSummary[]): string {
  return formatTable(
    [
      "ID",
      "STATE",
      "NAME",
      "QUEUE",
      { title: "PRIORITY", right: true },
      { title: "ATTEMPTS", right: true },
      "SINCE (UTC)",
      "ARGUMENTS / ERROR",
    ],
    jobs.map((job) => [
      job.id,
      job.state === "claimed" ? "running" : job.state,
      job.name,
      job.queue,
      job.priority,
      job.attempts,
      job.since.toISOString().slice(0, 19),
      job.error ? `${job.error.name}: ${job.error.message}` : shortValue(job.arguments, 60),
    ]),
  );
}

function stateArgument(text: string): JobState {
  const state = text === "running" ? "claimed" : text;
  if (!(JOB_STATES as readonly string[]).includes(state))
    throw new InvalidArgumentError(`must be one of ${JOB_STATES.join(", ")} or running`);
  return state as JobState;
}

function limitArgument(text: string): number {
  const limit = countArgument(text);
  if (limit > 500) throw new InvalidArgumentError("must be at most 500");
  return limit;
}
