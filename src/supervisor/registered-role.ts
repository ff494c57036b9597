import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Database } from "../database/connection.js";
import type { JobPolicies } from "../definitions/job-policies.js";
import type { Logger } from "../logger.js";
import { deleteUnconfirmedRegistration, registerProcess, type ProcessKind } from "../models/process.js";
import { Heartbeat } from "../processes/heartbeat.js";
import type { HookSet, LifecycleEvent, ProcessInfo } from "../processes/hooks.js";
import type { RoleRunner } from "./role-table.js";
import { deregisterProcess } from "../processes/registration.js";
import { retryStart } from "./start-retry.js";

/** What registering a process needs. */
export interface RegistrationOptions {
  readonly kind: ProcessKind;
  /** Unique per supervisor; generated when absent. */
  readonly name?: string;
  readonly supervisorId: number | null;
  readonly metadata: Record<string, unknown>;
}

/** The shared machinery every registered process runs with. */
export interface RegisteredEnvironment {
  readonly database: Database;
  /** For putting leftover claims back in line through their concurrency slots. */
  readonly policies: JobPolicies;
  readonly hooks: HookSet;
  readonly logger: Logger;
  readonly heartbeatInterval: number;
  /** Called once when the heartbeat finds this process's row gone (it was pruned as dead). */
  readonly onLost: (process: RegisteredRole) => void;
}

/**
 * A process in `firm_queue_processes` (a supervisor, or a role such as a worker): it owns the row,
 * the heartbeat that keeps the row alive, the lifecycle hooks, and the role's poller when there
 * is one. Stopping is idempotent: stop hooks, shut the role down, deregister (any claim left goes
 * back to ready), exit hooks.
 */
export class RegisteredRole {
  private readonly heartbeat: Heartbeat;
  private runner: RoleRunner | undefined;
  private stopping: Promise<void> | undefined;
  private lost = false;

  private constructor(
    readonly info: ProcessInfo,
    private readonly env: RegisteredEnvironment,
  ) {
    this.heartbeat = new Heartbeat(
      env.database,
      info.id,
      env.heartbeatInterval,
      () => this.markLost(),
      env.hooks.reporter(() => ({ process: info, where: "heartbeat" })),
    );
  }

  /**
   * Register the row and start heartbeating. Call {@link begin} to run start hooks and the role.
   * A connection error is retried for a while (see start-retry.ts): a database blip while a
   * process starts does not fail the start.
   */
  static async register(options: RegistrationOptions, env: RegisteredEnvironment): Promise<RegisteredRole> {
    const name = options.name ?? newProcessName(options.kind);
    const { db, clock } = env.database;
    const supervisorId = options.supervisorId;
    const id = await retryStart(
      `registering the ${options.kind.toLowerCase()} process`,
      env.logger,
      async (attempt) => {
        if (attempt > 1) await deleteUnconfirmedRegistration(db, name, supervisorId);
        return registerProcess(db, { kind: options.kind, name, supervisorId, metadata: options.metadata }, clock.now());
      },
    );
    const info: ProcessInfo = Object.freeze({
      id,
      kind: options.kind,
      name,
      pid: process.pid,
      hostname: hostname(),
      supervisorId: options.supervisorId,
      metadata: Object.freeze({ ...options.metadata }),
    });
    const registered = new RegisteredRole(info, env);
    registered.heartbeat.start();
    return registered;
  }

  /**
   * The row was found removed by someone else (by the heartbeat, or by a claim the database
   * refused): the role must stop, because its claims were recovered. Acts once.
   */
  markLost(): void {
    if (this.lost) return;
    this.lost = true;
    this.env.logger.warn(
      "this process's row is gone (pruned as dead after missed heartbeats?); stopping it",
      this.fields(),
    );
    this.env.onLost(this);
  }

  /** Whether the row was found removed by someone else. */
  get isLost(): boolean {
    return this.lost;
  }

  /** Run the start hooks, then start the role (if any). */
  async begin(runner?: RoleRunner): Promise<void> {
    await this.runHooks("Start");
    if (this.stopping) return;
    this.runner = runner;
    if (runner?.prepare)
      await retryStart(`preparing the ${this.info.kind.toLowerCase()}`, this.env.logger, () => runner.prepare!());
    runner?.start();
    this.env.logger.debug(`${this.info.kind.toLowerCase()} started`, this.fields());
  }

  /**
   * Stop: stop hooks, then the role gets `timeout` ms to finish work in flight (a worker fires its
   * jobs' AbortSignals and puts what is left back in line), then the row goes and exit hooks run.
   * `beforeDeregister` runs between (a supervisor stops its children there).
   */
  stop(timeout: number, beforeDeregister?: () => Promise<void>, reason = "its supervisor is stopping"): Promise<void> {
    return (this.stopping ??= this.shutdown(
      this.lost ? 0 : timeout,
      beforeDeregister,
      this.lost ? "its process row is gone (pruned as dead)" : reason,
    ));
  }

  /** Run this process's hooks for `event`. */
  runHooks(event: LifecycleEvent): Promise<void> {
    return this.env.hooks.run(this.info.kind, event, this.info);
  }

  private async shutdown(
    timeout: number,
    beforeDeregister: (() => Promise<void>) | undefined,
    reason: string,
  ): Promise<void> {
    await this.runHooks("Stop");
    await this.guard("stopping the role", () => this.runner?.shutdown(timeout));
    if (beforeDeregister) await this.guard("stopping children", beforeDeregister);
    await this.heartbeat.stopPolling();
    await this.guard("deregistering", async () => {
      // Claims still held here were not finished in time: back in line, no attempt counted. Not
      // those of jobs that ran without their outcome recorded: they are recovered as a crash's.
      await deregisterProcess(this.env.database, this.env.policies, this.info.id, this.runner?.unrecordedJobIds?.());
    });
    // Every exit of a role says why (a supervisor's says it in its "stopping" line too).
    this.env.logger.info(`${this.info.kind.toLowerCase()} stopped`, { ...this.fields(), reason });
    await this.runHooks("Exit");
  }

  private async guard(where: string, work: () => Promise<unknown> | undefined): Promise<void> {
    try {
      await work();
    } catch (error) {
      await this.env.hooks.error(error, { process: this.info, where });
    }
  }

  private fields(): Record<string, unknown> {
    return { processId: this.info.id, kind: this.info.kind, name: this.info.name };
  }
}

/** A process name unique enough for the (name, supervisor id) index: kind plus random hex. */
export function newProcessName(kind: ProcessKind): string {
  return `${kind.toLowerCase()}-${randomBytes(6).toString("hex")}`;
}
