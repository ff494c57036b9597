import { durationFlag } from "./arguments.js";
import { InvalidArgumentError, Option, type Command } from "commander";
import type { CliHelpers } from "./failed-command.js";
import { dashboardAuthFromEnv } from "../dashboard/options.js";
import { startDashboardServer } from "../dashboard/server.js";

interface DashboardFlags {
  readonly port: number;
  readonly host: string;
  readonly basePath?: string;
  readonly readOnly?: boolean;
  readonly refresh?: string;
  readonly allowedHost?: string[];
}

/**
 * `firm-queue dashboard`: serve the web dashboard until stopped. Credentials come from the
 * environment (FIRM_QUEUE_DASHBOARD_USERNAME/PASSWORD, FIRM_QUEUE_DASHBOARD_TOKEN); without
 * them it listens on loopback only.
 */
export function registerDashboardCommand(program: Command, helpers: CliHelpers): void {
  const command = program
    .command("dashboard")
    .description(
      "Serve the web dashboard (queues, jobs, failures, processes, recurring tasks, concurrency) until stopped. " +
        "Basic credentials from FIRM_QUEUE_DASHBOARD_USERNAME and FIRM_QUEUE_DASHBOARD_PASSWORD, a bearer token from " +
        "FIRM_QUEUE_DASHBOARD_TOKEN; without either it only listens on a loopback address.",
    )
    .addOption(new Option("-p, --port <n>", "port to listen on (0: any free port)").argParser(port).default(9000))
    .addOption(new Option("--host <address>", "address to listen on").default("127.0.0.1"))
    .addOption(new Option("--base-path <path>", 'serve under this path, e.g. "/jobs" behind a proxy'))
    .addOption(
      new Option(
        "--allowed-host <host>",
        "a Host name (optionally with :port) to answer for; repeat for several. Default: loopback names only without credentials, any with them",
      ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .addOption(new Option("--read-only", "hide and refuse every action (retry, discard, pause, clear, run now)"))
    .addOption(
      new Option("--refresh <duration>", 'how often pages refresh their figures, e.g. "5s"; "0" turns it off'),
    );
  for (const option of helpers.commonOptions()) command.addOption(option);
  command.action(async (flags: DashboardFlags) => {
    const firm = await helpers.firmFor(flags as never);
    try {
      const refresh = flags.refresh === undefined ? {} : { refreshInterval: durationFlag(flags.refresh) };
      const server = await startDashboardServer({
        firm,
        port: flags.port,
        host: flags.host,
        ...(flags.basePath ? { basePath: flags.basePath } : {}),
        readOnly: flags.readOnly === true,
        ...(flags.allowedHost ? { allowedHosts: flags.allowedHost } : {}),
        ...refresh,
        ...dashboardAuthFromEnv(),
      });
      console.log(`firm-queue dashboard on ${server.url}${flags.readOnly ? " (read-only)" : ""}`);
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      await server.close();
    } finally {
      await firm.close();
    }
  });
}

function port(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535)
    throw new InvalidArgumentError("must be a port number, 0-65535");
  return parsed;
}
