import type { Logger } from "../logger.js";
import type { Database } from "../database/connection.js";
import { ConfigurationError, redactUrl } from "../errors.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { JobRegistry } from "../definitions/job-registry.js";
import type { HookSet } from "../processes/hooks.js";
import { RegisteredRole } from "./registered-role.js";
import { roleDefinition, type RoleRunner } from "./role-table.js";
import { rolePoolSize } from "./connection-budget.js";
import { tellSupervisor, type ChildSpec } from "./child-protocol.js";
import { deregisterProcess } from "../processes/registration.js";
import type { MetricSamples } from "../metric-samples.js";
import { logExits } from "./exit-log.js";
import { retryStart } from "./start-retry.js";

/** How often a child that counts jobs sends its counts to the supervisor, when they changed. */
const METRICS_SEND_MS = 1000;

/** What a child needs from the FirmQueue its job modules define. */
export interface ChildHost {
  /** The instance's options that a child needs (FirmQueue's resolved options satisfy it). */
  readonly options: {
    readonly databaseUrl: string;
    readonly tablePrefix: string;
    readonly preserveFinishedJobs: boolean;
    readonly clearFinishedJobsAfter: number | null;
    readonly logger: Logger;
  };
  readonly registry: JobRegistry;
  readonly policies: JobPolicies;
  readonly hooks: HookSet;
  /** The database, its pool sized for at least `poolSize` connections. */
  database(poolSize: number): Promise<Database>;
  close(): Promise<void>;
  /** The instance's job metrics: `enable()` starts counting into `samples`. */
  readonly metrics: { enable(): unknown; readonly samples: MetricSamples };
}

/**
 * Run one role in this fork-mode child until told to stop. TERM/INT and losing the supervisor
 * (IPC disconnect: it was killed) stop gracefully, letting jobs in flight finish up to
 * `shutdownTimeout`; QUIT stops at once, putting claims back in line. A row pruned as dead stops
 * the child too. The child always exits 0 after a stop: only a crash exits otherwise, and the
 * supervisor fails that crash's claims with ProcessExitError.
 */
export async function runForkChild(host: ChildHost, spec: ChildSpec): Promise<void> {
  if (host.options.databaseUrl !== spec.databaseUrl) {
    throw new ConfigurationError(
      `the job modules' FirmQueue uses database ${redactUrl(host.options.databaseUrl)}, ` +
        `but the supervisor uses ${redactUrl(spec.databaseUrl)}: pass the same databaseUrl (or none, to use FIRM_QUEUE_DATABASE_URL)`,
    );
  }
  if (host.options.tablePrefix !== spec.tablePrefix) {
    throw new ConfigurationError(
      `the job modules' FirmQueue uses table prefix ${host.options.tablePrefix}, but the supervisor uses ` +
        `${spec.tablePrefix}: pass the same tablePrefix (or none, to use FIRM_QUEUE_TABLE_PREFIX)`,
    );
  }
  const { logger } = host.options;
  const definition = roleDefinition(spec.role);
  const exits = logExits(logger, `${definition.kind.toLowerCase()} child`);
  const database = await retryStart("connecting to the database", logger, () => host.database(rolePoolSize(spec.role)));
  let exiting = false;
  const sendMetrics = spec.metrics ? startSendingMetrics(host.metrics) : undefined;
  const exit = async (reason: string, stop: () => Promise<void>) => {
    if (exiting) return;
    exiting = true;
    exits.because(reason);
    logger.info(`${definition.kind.toLowerCase()} child stopping`, { reason, name: spec.name });
    await stop();
    // The jobs that ran during the stop count too.
    await sendMetrics?.();
    await host.close().catch(() => undefined);
    process.exit(0);
  };
  const role = await RegisteredRole.register(
    {
      kind: definition.kind,
      name: spec.name,
      supervisorId: spec.supervisorId,
      metadata: definition.metadata(spec.role.settings),
    },
    {
      database,
      policies: host.policies,
      hooks: host.hooks,
      logger,
      heartbeatInterval: spec.heartbeatInterval,
      onLost: () => void exit("its process row is gone (pruned as dead)", () => role.stop(0)),
    },
  );
  const graceful = (reason: string) => void exit(reason, () => role.stop(spec.shutdownTimeout));
  process.on("SIGTERM", () => graceful("SIGTERM"));
  process.on("SIGINT", () => graceful("SIGINT"));
  let runner: RoleRunner | undefined;
  process.on("SIGQUIT", () => {
    if (!exiting) return void exit("SIGQUIT", () => role.stop(0));
    // Already stopping gracefully: stop waiting for running jobs. A worker puts them back in
    // line now but still waits for the outcome writes of jobs that already ran, then the
    // graceful stop under way exits as usual.
    if (runner?.hurry) return runner.hurry();
    exits.because("SIGQUIT during a graceful stop");
    void deregisterProcess(database, host.policies, role.info.id).finally(() => process.exit(0));
  });
  process.on("disconnect", () => {
    logger.warn("lost the supervisor; finishing jobs in flight, then exiting", {
      processId: role.info.id,
      kind: definition.kind,
    });
    graceful("lost the supervisor (IPC disconnect)");
  });
  runner = definition.create(spec.role.settings, {
    database,
    registry: host.registry,
    policies: host.policies,
    processId: role.info.id,
    preserveFinishedJobs: host.options.preserveFinishedJobs,
    clearFinishedJobsAfter: host.options.clearFinishedJobsAfter,
    logger,
    onError: host.hooks.reporter(() => ({ process: role.info, where: `${definition.kind.toLowerCase()} poll` })),
    onProcessLost: () => role.markLost(),
  });
  await role.begin(runner);
  tellSupervisor({ type: "started", processId: role.info.id });
  // The supervisor may have died before the disconnect listener was in place.
  if (!process.connected) graceful("lost the supervisor (IPC disconnect) while starting");
}

/** Count jobs, and send the counts to the supervisor every second when they changed; returns "send now". */
function startSendingMetrics(metrics: ChildHost["metrics"]): () => Promise<void> {
  metrics.enable();
  let sent = -1;
  const send = async () => {
    const version = metrics.samples.version;
    if (version === sent) return;
    sent = version;
    await tellSupervisor({ type: "metrics", samples: metrics.samples.snapshot() });
  };
  setInterval(() => void send(), METRICS_SEND_MS).unref();
  return send;
}
