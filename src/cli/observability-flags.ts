import { InvalidArgumentError, Option, type Command } from "commander";
import type { FirmQueue } from "../firm-queue.js";
import { HealthChecks } from "../facade/health-checks.js";
import { startObservabilityServer, type ObservabilityServer } from "../facade/observability-server.js";
import type { Supervisor } from "../supervisor/supervisor.js";

/** The flags of `firm-queue start` that serve metrics and probes. */
export interface ObservabilityFlags {
  readonly metricsPort?: number;
  readonly metricsHost?: string;
  readonly healthPort?: number;
  readonly healthHost?: string;
}

/** Add `--metrics-port`, `--metrics-host`, `--health-port` and `--health-host` to a command. */
export function addObservabilityOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--metrics-port <n>", "serve Prometheus metrics at /metrics (and /livez, /readyz) on this port")
        .argParser(portArgument)
        .env("FIRM_QUEUE_METRICS_PORT"),
    )
    .addOption(
      new Option("--metrics-host <host>", "address the metrics server listens on (default 127.0.0.1)").env(
        "FIRM_QUEUE_METRICS_HOST",
      ),
    )
    .addOption(
      new Option("--health-port <n>", "serve the /livez and /readyz probes on this port (may equal --metrics-port)")
        .argParser(portArgument)
        .env("FIRM_QUEUE_HEALTH_PORT"),
    )
    .addOption(
      new Option("--health-host <host>", "address the health server listens on (default 127.0.0.1)").env(
        "FIRM_QUEUE_HEALTH_HOST",
      ),
    );
}

function portArgument(text: string): number {
  const port = /^\s*\d+\s*$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError("must be a port, 0 to 65535");
  return port;
}

/** The servers `start` runs beside its supervisor; `watch` hands them the supervisor once it is up. */
export interface ObservabilityServers {
  watch(supervisor: Supervisor): void;
  close(): Promise<void>;
}

/**
 * Start the servers the flags ask for, before the supervisor starts: a probe during boot gets
 * "starting" (503) rather than a refused connection, and metrics are switched on before fork-mode
 * children are spawned, so they count from their first job. One server when both ports are equal.
 */
export async function startObservability(
  firm: FirmQueue,
  flags: ObservabilityFlags,
  aliveThresholdMs: number,
): Promise<ObservabilityServers> {
  const servers: ObservabilityServer[] = [];
  let health: HealthChecks | undefined;
  if (flags.metricsPort !== undefined || flags.healthPort !== undefined) {
    health = new HealthChecks(firm.inspect, { aliveThresholdMs });
  }
  const log = (what: string, server: ObservabilityServer) =>
    firm.options.logger.info(`${what} listening`, { url: server.url });
  try {
    if (flags.metricsPort !== undefined) {
      firm.metrics.configure({ aliveThreshold: aliveThresholdMs }).enable();
      const shared = flags.healthPort === undefined || flags.healthPort === flags.metricsPort;
      const server = await startObservabilityServer({
        port: flags.metricsPort,
        host: flags.metricsHost ?? "127.0.0.1",
        metrics: firm.metrics,
        ...(shared && health ? { health } : {}),
      });
      servers.push(server);
      log("metrics server", server);
    }
    if (flags.healthPort !== undefined && flags.healthPort !== flags.metricsPort && health) {
      const server = await startObservabilityServer({
        port: flags.healthPort,
        host: flags.healthHost ?? "127.0.0.1",
        health,
      });
      servers.push(server);
      log("health server", server);
    }
  } catch (error) {
    await Promise.all(servers.map((server) => server.close()));
    health?.close();
    throw error;
  }
  return {
    watch: (supervisor) => health?.watch(supervisor),
    close: async () => {
      await Promise.all(servers.map((server) => server.close()));
      health?.close();
    },
  };
}
