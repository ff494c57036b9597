import { countArgument } from "./arguments.js";
import { Command, Option } from "commander";
import { createRequire } from "node:module";
import type { FirmQueue } from "../firm-queue.js";
import { firmFor } from "./firm-for.js";
import { registerFailedCommands } from "./failed-command.js";
import { registerJobsCommands } from "./jobs-command.js";
import { runCheck, runStart } from "./start-command.js";
import { runLiveCheck, type LiveFlags } from "./live-check-command.js";
import type { CliFlags } from "./config.js";
import { formatRecurringTasks } from "./recurring-listing.js";
import { migrateReport, type MigrateOptions } from "./migrate-command.js";
import { registerDashboardCommand } from "./dashboard-command.js";
import { exitWithUsageStatus } from "./exit-status.js";
import { registerQueuesCommands } from "./queues-command.js";
import { registerQueueLimitCommands } from "./queue-limit-commands.js";
import { registerProcessesCommands } from "./processes-command.js";
import { registerStatsCommand } from "./stats-command.js";
import { registerTopCommand } from "./top-command.js";
import { addObservabilityOptions, type ObservabilityFlags } from "./observability-flags.js";
import { applyLogFlags, logFormatOption, logJobOutcomesOption } from "./log-options.js";

const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

interface CommonOptions {
  databaseUrl?: string;
  tablePrefix?: string;
  require: string[];
}

/**
 * The `firm-queue` command line, every command declared: a new program on each call, so that a
 * test can parse many command lines in one process. `main.ts` runs it on process.argv.
 */
export function cliProgram(): Command {
  const program = exitWithUsageStatus(new Command("firm-queue"))
    .version(version)
    .description("A database-backed job queue for Node.js on SQLite, PostgreSQL and MySQL/MariaDB.")
    .showHelpAfterError()
    .addHelpText(
      "after",
      "\nThe database URL is --database-url, else env FIRM_QUEUE_DATABASE_URL, else\n" +
        "sqlite:firm-queue.sqlite3 (an error under NODE_ENV=production) - unless your --require module passes\n" +
        "databaseUrl or database to new FirmQueue().\n\n" +
        "Exit status: 0 when the command worked, 1 when the operation failed, 2 when the command line is wrong.",
    )
    .hook("preAction", (_program, command) => applyLogFlags(command.opts()));

  program
    .command("migrate")
    .description("Create or update firm-queue's tables. Safe to run again: it applies only what is missing.")
    .addOption(databaseUrlOption())
    .addOption(tablePrefixOption())
    .addOption(requireOption())
    .addOption(logFormatOption())
    .option("--status", "list applied and pending migrations without changing anything; exits 1 when some are pending")
    .addOption(
      new Option(
        "--print-sql [database]",
        "print every migration as SQL (sqlite, postgres or mysql; default: the database URL's) for your own migration tool, without connecting",
      ).choices(["sqlite", "postgres", "mysql"]),
    )
    .action(async (options: CommonOptions & MigrateOptions) => {
      const firm = await firmForFlags(options, { jobsRequired: false });
      try {
        if (options.printSql !== undefined || options.status) {
          console.log(await migrateReport(firm, options));
          return;
        }
        const applied = await firm.migrate();
        console.log(
          applied.length === 0
            ? "Schema is up to date."
            : `Applied ${applied.length} migration(s): ${applied.join(", ")}`,
        );
      } finally {
        await firm.close();
      }
    });

  const startCommand = program
    .command("start")
    .description(
      "Run workers and a dispatcher until stopped. TERM or Ctrl-C (INT): stop claiming, let running jobs end " +
        "(up to the shutdown timeout), put the rest back in line, exit 0. QUIT: put claimed jobs back at once.",
    )
    .addOption(configOption())
    .addOption(databaseUrlOption())
    .addOption(tablePrefixOption())
    .addOption(listenUrlOption())
    .addOption(requireOption())
    .addOption(logFormatOption())
    .addOption(logJobOutcomesOption());
  addObservabilityOptions(addStartOptions(startCommand)).action((options: CliFlags & ObservabilityFlags) =>
    runStart(options),
  );

  const checkCommand = program
    .command("check")
    .description(
      "Validate the configuration (file, FIRM_QUEUE_* variables, flags) and the job modules; print a summary. Exits 0 when valid, 1 otherwise.",
    )
    .addOption(configOption())
    .addOption(databaseUrlOption())
    .addOption(tablePrefixOption())
    .addOption(listenUrlOption())
    .addOption(requireOption())
    .addOption(logFormatOption());
  addStartOptions(checkCommand)
    .addOption(
      new Option("--hosts <n>", "hosts that will run this configuration, for the connection total (default 1)")
        .argParser(countArgument)
        .default(1),
    )
    .option(
      "--live",
      "check a running deployment instead: the database answers, processes heartbeat, no ready job waits too long; exits 1 on a failure",
    )
    .addOption(
      new Option(
        "--max-latency <duration>",
        "with --live: the oldest ready job must have waited less than this",
      ).default("5m"),
    )
    .addOption(
      new Option(
        "--queue <name>",
        "with --live: check the latency of this queue only (repeatable; default all)",
      ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .action(async (options: CliFlags & LiveFlags & { hosts: number }) => {
      if (!options.live) return console.log(await runCheck(options, options.hosts));
      const { ok, report } = await runLiveCheck(options);
      console.log(report);
      if (!ok) process.exitCode = 1;
    });

  program
    .command("drain")
    .description("Run the ready jobs in this process until none are left, then exit. Prints how many ran.")
    .addOption(databaseUrlOption())
    .addOption(tablePrefixOption())
    .addOption(requireOption())
    .addOption(queuesOption())
    .addOption(new Option("-c, --concurrency <n>", "jobs run at once").argParser(countArgument).default(1))
    .addOption(logFormatOption())
    .addOption(logJobOutcomesOption())
    .action(async (options: CommonOptions & { queues: string; concurrency: number }) => {
      const firm = await firmForFlags(options, { jobsRequired: true });
      try {
        const count = await firm.drain({ queues: options.queues, concurrency: options.concurrency });
        console.log(`Ran ${count} job(s).`);
      } finally {
        await firm.close();
      }
    });

  program
    .command("recurring")
    .description("List recurring tasks (declared and dynamic) with their schedule, next run and last run.")
    .addOption(databaseUrlOption())
    .addOption(tablePrefixOption())
    .addOption(requireOption())
    .option("--json", "print the tasks as JSON instead of a table")
    .action(async (options: CommonOptions & { json?: boolean }) => {
      const firm = await firmForFlags(options, { jobsRequired: false });
      try {
        const tasks = await firm.recurring.list();
        console.log(
          options.json
            ? JSON.stringify(tasks, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value), 2)
            : formatRecurringTasks(tasks),
        );
      } finally {
        await firm.close();
      }
    });

  registerFailedCommands(program, {
    commonOptions: () => [databaseUrlOption(), tablePrefixOption(), requireOption(), logFormatOption()],
    firmFor: (options: CommonOptions) => firmForFlags(options, { jobsRequired: false }),
  });

  registerJobsCommands(program, {
    commonOptions: () => [databaseUrlOption(), tablePrefixOption(), requireOption(), logFormatOption()],
    firmFor: (options: CommonOptions) => firmForFlags(options, { jobsRequired: false }),
  });

  const queueHelpers = {
    commonOptions: () => [databaseUrlOption(), tablePrefixOption(), requireOption(), logFormatOption()],
    firmFor: (options: CommonOptions) => firmForFlags(options, { jobsRequired: false }),
  };
  registerQueueLimitCommands(registerQueuesCommands(program, queueHelpers), queueHelpers);

  const operatorHelpers = {
    commonOptions: () => [databaseUrlOption(), tablePrefixOption(), requireOption(), logFormatOption()],
    firmFor: (options: CommonOptions) => firmForFlags(options, { jobsRequired: false }),
  };
  registerProcessesCommands(program, operatorHelpers);
  registerStatsCommand(program, operatorHelpers);
  registerTopCommand(program, operatorHelpers);

  registerDashboardCommand(program, {
    commonOptions: () => [databaseUrlOption(), tablePrefixOption(), requireOption(), logFormatOption()],
    firmFor: (options: CommonOptions) => firmForFlags(options, { jobsRequired: false }),
  });
  return program;
}

/** The settings `start` takes, which `check` validates the same way. */
function addStartOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        "--mode <mode>",
        "fork: a child process per worker and dispatcher (default); async: all in this process",
      ).choices(["fork", "async"]),
    )
    .addOption(
      new Option(
        "-q, --queues <list>",
        'queues each worker takes jobs from: "*", names and prefix* patterns, comma-separated, in order',
      ),
    )
    .addOption(new Option("-c, --concurrency <n>", "jobs each worker runs at once (default 3)"))
    .addOption(new Option("--processes <n>", "processes per worker (default 1)"))
    .addOption(new Option("--polling-interval <duration>", "worker sleep when the queues are empty, e.g. 100ms, 1s"))
    .addOption(
      new Option(
        "--prefetch <n>",
        "jobs each worker claims ahead of its free slots when there is a backlog; 0 claims only for free slots (default 20 × concurrency, at most 500)",
      ),
    )
    .addOption(
      new Option(
        "--exec-argv <flags>",
        'fork mode: node flags for each worker process, space-separated, e.g. --exec-argv="--max-semi-space-size=4"; "" for none (default none)',
      ),
    )
    .addOption(
      new Option("--shutdown-timeout <duration>", "how long a graceful stop waits for running jobs (default 5s)"),
    )
    .addOption(
      new Option("--process-heartbeat-interval <duration>", "how often each process proves it is alive (default 60s)"),
    )
    .addOption(
      new Option(
        "--process-alive-threshold <duration>",
        "after this long without a heartbeat a process is dead (default 5m)",
      ),
    );
}

function configOption(): Option {
  return new Option(
    "--config <path>",
    "config module (default: env FIRM_QUEUE_CONFIG, else firm-queue.config.ts/.js/.mjs in this directory)",
  );
}

function databaseUrlOption(): Option {
  return new Option(
    "-d, --database-url <url>",
    "sqlite:path, postgres://… or mysql://… (default: env FIRM_QUEUE_DATABASE_URL)",
  );
}

function tablePrefixOption(): Option {
  return new Option(
    "--table-prefix <prefix>",
    "what firm-queue's table names start with (default: env FIRM_QUEUE_TABLE_PREFIX, else firm_queue_)",
  );
}

function listenUrlOption(): Option {
  return new Option(
    "--listen-url <url>",
    "PostgreSQL: direct URL for the LISTEN connection when --database-url goes through a pooler (default: env FIRM_QUEUE_LISTEN_URL)",
  );
}

function requireOption(): Option {
  return new Option(
    "-r, --require <path>",
    "module defining your jobs (.js, .mjs or .ts); its default export or `firm` export is the FirmQueue (repeatable)",
  )
    .argParser((value: string, previous: string[]) => [...previous, value])
    .default([]);
}

function queuesOption(): Option {
  return new Option(
    "-q, --queues <list>",
    'queues to take jobs from: "*", names and prefix* patterns, comma-separated, in order',
  ).default("*");
}

/** The FirmQueue for a command's flags (see {@link firmFor}). */
function firmForFlags(options: CommonOptions, need: { jobsRequired: boolean }): Promise<FirmQueue> {
  return firmFor(
    {
      modules: options.require,
      databaseUrl: options.databaseUrl || undefined,
      ...(options.tablePrefix === undefined ? {} : { tablePrefix: options.tablePrefix }),
    },
    need,
  );
}
