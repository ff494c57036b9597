import { relative } from "node:path";
import type { ResolvedStartOptions } from "../supervisor/settings.js";
import { redactUrl } from "../errors.js";
import type { FirmQueue } from "../firm-queue.js";
import { firmFor } from "./firm-for.js";
import { resolveRecurringTasks, type RecurringTask } from "../definitions/recurring-task.js";
import type { StopOptions, Supervisor } from "../supervisor/supervisor.js";
import { resolveCliConfig, type CliConfig, type CliFlags } from "./config.js";
import { describeClusterWarnings } from "./cluster-warnings.js";
import { describeConnections } from "./connections.js";
import { startObservability, type ObservabilityFlags } from "./observability-flags.js";
import { defaultPrefetch } from "../roles/claim-buffer.js";
import { logExits } from "../supervisor/exit-log.js";

/**
 * `firm-queue start`: resolve the configuration, load the job modules, start the supervisor and
 * run until a signal. TERM and INT stop gracefully (a second one changes nothing), QUIT stops at
 * once; either way the process exits 0 once every claim is finished or back in line.
 */
export async function runStart(flags: CliFlags & ObservabilityFlags): Promise<void> {
  const config = await resolveCliConfig(flags);
  const firm = await loadFirm(config);
  const exits = logExits(firm.options.logger, "firm-queue start");
  const observability = await startObservability(firm, flags, config.start.processAliveThreshold).catch(
    async (error: unknown) => {
      await firm.close();
      throw error;
    },
  );
  // Handlers go in before starting: a signal during startup stops the supervisor once it is up,
  // instead of killing it half-started.
  let supervisor: Supervisor | undefined;
  let pending: StopOptions | undefined;
  let signalled: string | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    const options = { immediate: signal === "SIGQUIT" };
    firm.options.logger.info("signal received", { signal, supervisorId: supervisor?.id });
    signalled ??= `stopped on ${signal}`;
    if (supervisor) void supervisor.stop(options);
    else pending = { immediate: options.immediate || (pending?.immediate ?? false) };
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGQUIT"] as const) process.on(signal, onSignal);
  try {
    supervisor = await firm.start(config.startOptions);
  } catch (error) {
    exits.because(`the supervisor could not start: ${error instanceof Error ? error.message : String(error)}`);
    // An open pool would keep the process alive after the error is printed.
    await observability.close();
    await firm.close();
    throw error;
  }
  observability.watch(supervisor);
  if (pending) void supervisor.stop(pending);
  await supervisor.stopped;
  exits.because(signalled ?? 'the supervisor stopped on its own (its "supervisor stopping" line says why)');
  await observability.close();
  await firm.close();
  // Jobs that ignored their AbortSignal may still hold timers; their claims are already back.
  process.exit(0);
}

/**
 * `firm-queue check`: validate the configuration and job modules, print a summary with the
 * connections `hosts` hosts running it may open, and warn when that passes the server's limit.
 */
export async function runCheck(flags: CliFlags, hosts = 1): Promise<string> {
  const config = await resolveCliConfig(flags);
  const firm = await loadFirm(config);
  try {
    const recurring = resolveRecurringTasks(config.startOptions.recurring, firm.jobNames);
    const connections = await describeConnections(config, firm, recurring, hosts);
    const cluster = await describeClusterWarnings(firm);
    return summarize(config, firm, recurring, [...connections.lines, ...cluster]);
  } finally {
    await firm.close();
  }
}

function loadFirm(config: CliConfig): Promise<FirmQueue> {
  return firmFor(
    {
      modules: config.jobs,
      databaseUrl: config.databaseUrl,
      logLevel: config.logLevel,
      logFormat: config.logFormat,
      listenUrl: config.listenUrl,
      tablePrefix: config.tablePrefix,
    },
    { jobsRequired: true },
  );
}

function summarize(
  config: CliConfig,
  firm: FirmQueue,
  recurring: readonly RecurringTask[],
  connections: readonly string[],
): string {
  const start: ResolvedStartOptions = config.start;
  const lines = [
    `config file:  ${config.file ? relative(process.cwd(), config.file) : "(none: defaults, environment and flags)"}`,
    `database:     ${redactUrl(firm.options.databaseUrl)}`,
    `mode:         ${start.mode}`,
    `job modules:  ${config.jobs.map((path) => relative(process.cwd(), path)).join(", ")}`,
    `jobs:         ${firm.jobNames.join(", ") || "(none defined)"}`,
    ...start.workers.map(
      (worker, index) =>
        `worker ${index + 1}:     queues=${[worker.queues].flat().join(",")} concurrency=${worker.concurrency} ` +
        `processes=${worker.processes} pollingInterval=${worker.pollingInterval}ms ` +
        `prefetch=${worker.prefetch ?? defaultPrefetch(worker.concurrency)}` +
        (start.mode === "fork" && worker.execArgv.length > 0 ? ` execArgv=${worker.execArgv.join(" ")}` : ""),
    ),
    ...start.dispatchers.map(
      (dispatcher, index) =>
        `dispatcher ${index + 1}: pollingInterval=${dispatcher.pollingInterval}ms batchSize=${dispatcher.batchSize}`,
    ),
    ...(start.scheduler
      ? [
          `scheduler:    dynamicTasks=${start.scheduler.dynamicTasks} pollingInterval=${start.scheduler.pollingInterval}ms`,
        ]
      : []),
    ...recurring.map((task) => `recurring:    ${task.key}: ${task.job} "${task.schedule}" (${task.timezone})`),
    `timings:      processHeartbeatInterval=${start.processHeartbeatInterval}ms processAliveThreshold=${start.processAliveThreshold}ms ` +
      `shutdownTimeout=${start.shutdownTimeout}ms`,
    ...connections,
  ];
  return `${lines.join("\n")}\nConfiguration OK.`;
}
