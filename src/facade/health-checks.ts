import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { FirmQueueError } from "../errors.js";
import type { Supervisor } from "../supervisor/supervisor.js";
import type { JobInspection } from "./job-inspection.js";

/** The database did not answer a readiness check in time. */
export class ReadinessTimeoutError extends FirmQueueError {
  constructor(readonly timeoutMs: number) {
    super(`The database did not answer the readiness check within ${timeoutMs} ms`);
  }
}

/** A probe's answer: the HTTP status to send and its JSON body. */
export interface ProbeResult {
  readonly status: 200 | 503;
  readonly body: Record<string, unknown>;
}

/** What the probes are judged by; each has a default. */
export interface HealthSettings {
  /** A role whose heartbeat is older is not ready: the supervisor's `processAliveThreshold` (default 5 min). */
  readonly aliveThresholdMs?: number | undefined;
  /** Readiness fails when the database has not answered within this (default 5000). */
  readonly databaseTimeoutMs?: number | undefined;
  /** Liveness fails when the event loop was blocked longer than this since the previous probe (default 10,000). */
  readonly maxEventLoopDelayMs?: number | undefined;
}

/**
 * Liveness and readiness of a running supervisor. Liveness is about this process only: it
 * answers, and its event loop was never blocked longer than `maxEventLoopDelayMs` since the last
 * probe. Readiness asks the database: it answers within `databaseTimeoutMs`, the supervisor's
 * row and every one of its roles is registered and heartbeating within the alive threshold.
 */
export class HealthChecks {
  private supervisor: Supervisor | undefined;
  private stopped = false;
  private readonly delay: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  private readonly startedAt = Date.now();

  private readonly settings: Required<HealthSettings>;

  constructor(
    private readonly inspect: JobInspection,
    settings: HealthSettings = {},
  ) {
    this.settings = {
      aliveThresholdMs: settings.aliveThresholdMs ?? 300_000,
      databaseTimeoutMs: settings.databaseTimeoutMs ?? 5000,
      maxEventLoopDelayMs: settings.maxEventLoopDelayMs ?? 10_000,
    };
    this.delay.enable();
  }

  /** The supervisor to judge readiness by; until then (booting) it is not ready. */
  watch(supervisor: Supervisor): void {
    this.supervisor = supervisor;
    void supervisor.stopped.then(() => (this.stopped = true));
  }

  /** `/livez`: the process answers and its event loop is not stuck. */
  liveness(): ProbeResult {
    const maxDelayMs = Math.round(this.delay.max / 1e6);
    this.delay.reset();
    const ok = maxDelayMs <= this.settings.maxEventLoopDelayMs;
    return {
      status: ok ? 200 : 503,
      body: {
        status: ok ? "ok" : "event loop blocked",
        pid: process.pid,
        uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
        eventLoopDelayMaxMs: maxDelayMs,
      },
    };
  }

  /** `/readyz`: the database answers and this supervisor's roles are registered and heartbeating. */
  async readiness(): Promise<ProbeResult> {
    const supervisor = this.supervisor;
    if (!supervisor || this.stopped)
      return { status: 503, body: { status: supervisor ? "stopped" : "starting", ready: false } };
    let rows: Awaited<ReturnType<JobInspection["heartbeats"]>>;
    try {
      rows = await withTimeout(
        this.inspect.heartbeats({ aliveThreshold: this.settings.aliveThresholdMs, supervisorId: supervisor.id }),
        this.settings.databaseTimeoutMs,
      );
    } catch (error) {
      return {
        status: 503,
        body: {
          status: "database unreachable",
          ready: false,
          database: { ok: false, error: error instanceof Error ? error.message : String(error) },
        },
      };
    }
    const own = rows.find((row) => row.id === supervisor.id);
    const roles = rows.filter((row) => row.supervisorId === supervisor.id);
    const alive = roles.filter((row) => !row.stale).length;
    const supervisorOk = own !== undefined && !own.stale;
    const rolesOk = alive >= supervisor.roleCount;
    const ready = supervisorOk && rolesOk;
    return {
      status: ready ? 200 : 503,
      body: {
        status: ready ? "ready" : !supervisorOk ? "supervisor not heartbeating" : "roles missing or not heartbeating",
        ready,
        database: { ok: true },
        supervisor: {
          id: supervisor.id,
          mode: supervisor.mode,
          registered: own !== undefined,
          heartbeatAgeMs: own?.heartbeatAgeMs ?? null,
        },
        roles: { expected: supervisor.roleCount, alive, stale: roles.length - alive },
      },
    };
  }

  /** Stop measuring the event loop. */
  close(): void {
    this.delay.disable();
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ReadinessTimeoutError(ms)), ms);
  });
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
