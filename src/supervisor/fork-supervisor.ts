import { fork, type ChildProcess } from "node:child_process";
import type { ResolvedStartOptions } from "./settings.js";
import { ChildProcessError } from "../errors.js";
import { reapExitedProcess } from "../processes/crash-recovery.js";
import { findSupervisedProcess } from "../models/process.js";
import { newProcessName } from "./registered-role.js";
import { planRoles, roleDefinition, type RoleSpec } from "./role-table.js";
import { BaseSupervisor } from "./base-supervisor.js";
import { resolveChildLaunch, type ChildLaunch } from "./child-launch.js";
import { CHILD_SPEC_VARIABLE, type ChildMessage, type ChildSpec } from "./child-protocol.js";
import type { SupervisorDependencies } from "./supervisor.js";
import { deregisterProcess } from "../processes/registration.js";
import { startedClaimJobIds } from "../models/claim-start.js";

/** Extra time a stopping child gets past `shutdownTimeout` to deregister before it is killed. */
const STOP_GRACE_MS = 5000;
/** A child that dies sooner than this after starting is restarted with a growing delay. */
const RAPID_EXIT_MS = 5000;
/** Children of one role lost one after another during boot before the start is given up. */
const MOST_BOOT_LOSSES = 5;

interface ChildHandle {
  readonly name: string;
  readonly spec: RoleSpec;
  readonly child: ChildProcess;
  readonly startedAt: number;
  /** The child's process id in the table, once it has registered; rejects if it exits first. */
  readonly started: Promise<number>;
  /** Resolves once the child has exited and what it left has been dealt with. */
  readonly reaped: Promise<void>;
  /** The child said it cannot start (bad job modules, unreachable database): not worth replacing at boot. */
  cannotStart: boolean;
  /** Resolves to the child that replaces this one once it is spawned (never, when stopping). */
  readonly replaced: Promise<ChildHandle>;
  readonly replacedBy: (replacement: ChildHandle) => void;
  killedAtDeadline: boolean;
}

/**
 * Runs each role in a child process of its own: one per worker (times `processes`) and one per
 * dispatcher. Each child imports the job modules, opens its own database connection and
 * registers its own row under this supervisor. A child that dies is reaped (an abnormal exit
 * fails its claims at once with ProcessExitError) and replaced. Stopping forwards the signal to
 * the children and waits for them, killing those still alive past the deadline.
 */
export class ForkSupervisor extends BaseSupervisor {
  readonly mode = "fork" as const;
  private readonly children = new Map<string, ChildHandle>();
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private readonly rapidExits = new Map<RoleSpec, number>();

  private constructor(
    settings: ResolvedStartOptions,
    deps: SupervisorDependencies,
    private readonly launch: ChildLaunch,
  ) {
    super(settings, deps);
  }

  static async start(settings: ResolvedStartOptions, deps: SupervisorDependencies): Promise<ForkSupervisor> {
    // Checked before anything registers: a mistake here changes nothing.
    const launch = resolveChildLaunch(settings.require, deps.definitionFiles);
    const supervisor = new ForkSupervisor(settings, deps, launch);
    await supervisor.boot({ mode: "fork", jobModules: launch.modules });
    deps.logger.info("supervisor started", {
      supervisorId: supervisor.id,
      mode: "fork",
      children: [...supervisor.children.values()].map((handle) => `${handle.spec.role}:${handle.child.pid}`).join(","),
    });
    return supervisor;
  }

  protected async startRoles(): Promise<void> {
    const handles = planRoles(this.settings, this.deps.recurringTasks).map((spec) => this.spawn(spec));
    await Promise.all(handles.map((handle) => this.untilRunning(handle)));
  }

  /**
   * Wait until the role of `handle` runs. A child lost during boot (killed, crashed after it got
   * going) is reaped and replaced like any other, and its replacement is waited for; only a child
   * that says it cannot start, or a role whose children keep dying, fails the start.
   */
  private async untilRunning(handle: ChildHandle): Promise<void> {
    for (let losses = 1; ; losses++) {
      try {
        await handle.started;
        return;
      } catch (error) {
        if (handle.cannotStart || this.isStopping || losses >= MOST_BOOT_LOSSES) throw error;
        this.deps.logger.warn("a child process was lost while starting; it is replaced", {
          role: handle.spec.role,
          pid: handle.child.pid,
          error,
        });
        // No replacement comes once the supervisor stops: give up then.
        handle = await Promise.race([handle.replaced, this.stopped.then(() => Promise.reject(error))]);
      }
    }
  }

  protected async stopRoles(immediate: boolean): Promise<void> {
    for (const timer of this.restartTimers) clearTimeout(timer);
    this.restartTimers.clear();
    const handles = [...this.children.values()];
    for (const handle of handles) signal(handle.child, immediate ? "SIGQUIT" : "SIGTERM");
    const everyone = Promise.all(handles.map((handle) => handle.reaped));
    const deadline = (immediate ? 0 : this.settings.shutdownTimeout) + STOP_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      everyone.then(() => false),
      new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), deadline))),
    ]);
    clearTimeout(timer);
    if (late) {
      for (const handle of handles) {
        if (handle.child.exitCode !== null || handle.child.signalCode !== null) continue;
        this.deps.logger.warn("child did not stop in time; killing it", {
          pid: handle.child.pid,
          role: handle.spec.role,
          deadlineMs: deadline,
        });
        handle.killedAtDeadline = true;
        signal(handle.child, "SIGKILL");
      }
    }
    await everyone;
  }

  protected override escalate(): void {
    for (const handle of this.children.values()) signal(handle.child, "SIGQUIT");
  }

  private spawn(spec: RoleSpec): ChildHandle {
    const definition = roleDefinition(spec);
    const name = newProcessName(definition.kind);
    const childSpec: ChildSpec = {
      name,
      supervisorId: this.id,
      role: spec,
      modules: this.launch.modules,
      databaseUrl: this.deps.databaseUrl,
      tablePrefix: this.deps.database.tableNames.prefix,
      heartbeatInterval: this.settings.processHeartbeatInterval,
      shutdownTimeout: this.settings.shutdownTimeout,
      metrics: this.deps.metrics.isEnabled,
    };
    const child = fork(this.launch.entry, [], {
      // A worker's own flags go last, so that they win over the supervisor's.
      execArgv: [...this.launch.execArgv, ...(spec.role === "worker" ? spec.settings.execArgv : [])],
      env: {
        ...process.env,
        [CHILD_SPEC_VARIABLE]: JSON.stringify(childSpec),
        FIRM_QUEUE_DATABASE_URL: this.deps.databaseUrl,
        FIRM_QUEUE_TABLE_PREFIX: this.deps.database.tableNames.prefix,
      },
    });
    let failure: string | undefined;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
      // A child that could not even be spawned emits "error" and may never emit "exit".
      child.once("error", (error) => {
        failure ??= error.message;
        resolve({ code: null, signal: null });
      });
    });
    const started = new Promise<number>((resolve, reject) => {
      child.on("message", (message: ChildMessage) => {
        if (message.type === "metrics") this.deps.metrics.children.update(name, message.samples);
        else if (message.type === "started") resolve(message.processId);
        else if (message.type === "failed") {
          failure = message.message;
          handle.cannotStart = true;
        }
      });
      void exited.then(({ code, signal }) =>
        reject(new ChildProcessError(spec.role, failure ?? describeExit(code, signal))),
      );
    });
    started.catch(() => undefined);
    let replacedBy!: (replacement: ChildHandle) => void;
    const handle: ChildHandle = {
      name,
      spec,
      child,
      startedAt: Date.now(),
      started,
      reaped: exited.then(({ code, signal }) => this.reap(handle, code, signal)),
      cannotStart: false,
      replaced: new Promise((resolve) => (replacedBy = resolve)),
      replacedBy,
      killedAtDeadline: false,
    };
    this.children.set(name, handle);
    return handle;
  }

  /** Deal with what an exited child left behind, then replace it unless we are stopping. */
  private async reap(handle: ChildHandle, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    this.children.delete(handle.name);
    // Its last counts stay in the sums: counters never go down when a child is replaced.
    this.deps.metrics.children.retire(handle.name);
    const { database, logger, hooks } = this.deps;
    const how = describeExit(code, signal);
    const fields = { pid: handle.child.pid, role: handle.spec.role, name: handle.name, exit: how };
    try {
      if (handle.killedAtDeadline) {
        // Killed by us after a graceful stop ran out of time. Jobs it never started go back in
        // line without an attempt counted; the claims of jobs that ran stay, as when a stop cannot
        // record an outcome: whether such a handler ended (its outcome unwritten) or still ran is
        // unknown here, so crash recovery fails them (ProcessMissingError) and their retry policy decides.
        const row = await findSupervisedProcess(database.db, this.id, handle.name);
        if (row) {
          const ran = await startedClaimJobIds(database.db, row.id);
          const released = await deregisterProcess(database, this.deps.policies, row.id, ran);
          logger.warn(
            "child killed at the shutdown deadline: unstarted jobs put back in line, jobs that ran left to crash recovery",
            {
              ...fields,
              releasedJobIds: released,
              keptJobIds: ran,
            },
          );
        }
      } else if (code !== 0 || signal !== null) {
        const reaped = await reapExitedProcess(database, this.deps.policies, this.id, handle.name, how);
        logger.error("child process exited abnormally; its jobs failed with ProcessExitError", {
          ...fields,
          processId: reaped?.process.id,
          jobIds: reaped?.failedJobIds ?? [],
        });
      } else if (!this.isStopping) {
        // A clean exit we did not ask for: its row was pruned. It deregistered; nothing else to do.
        logger.warn("child process exited on its own", fields);
      } else {
        logger.info("child process stopped", fields);
      }
    } catch (error) {
      await hooks.error(error, {
        process: this.self.info,
        where: `reaping ${handle.spec.role} child ${handle.child.pid}`,
      });
    }
    if (!this.isStopping) this.scheduleRestart(handle);
  }

  private scheduleRestart(handle: ChildHandle): void {
    const rapid = Date.now() - handle.startedAt < RAPID_EXIT_MS;
    const exits = rapid ? (this.rapidExits.get(handle.spec) ?? 0) + 1 : 0;
    this.rapidExits.set(handle.spec, exits);
    // A child that keeps dying at once (unreachable database, broken module) is not respawned in a tight loop.
    const delay = exits === 0 ? 0 : Math.min(250 * 2 ** (exits - 1), 15_000);
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      if (this.isStopping) return;
      const replacement = this.spawn(handle.spec);
      handle.replacedBy(replacement);
      replacement.started.then(
        (processId) =>
          this.deps.logger.info("child process replaced", {
            role: handle.spec.role,
            pid: replacement.child.pid,
            processId,
          }),
        () => undefined,
      );
    }, delay);
    this.restartTimers.add(timer);
  }
}

function signal(child: ChildProcess, name: NodeJS.Signals): void {
  if (child.exitCode === null && child.signalCode === null) child.kill(name);
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `killed by ${signal}`;
  return code === null ? "could not be started" : `exit code ${code}`;
}
