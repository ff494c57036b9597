import { ConfigurationError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { ProcessKind, ProcessRow } from "../models/process.js";

/** A registered process as lifecycle hooks see it: its row, without the moving heartbeat. */
export type ProcessInfo = Omit<ProcessRow, "lastHeartbeatAt">;

/** Where an error reported to `onError` came from. */
export interface ErrorContext {
  /** The process the failing machinery belongs to, when known. */
  readonly process?: ProcessInfo;
  /** What was being done: "worker poll", "heartbeat", "onWorkerStart hook", … */
  readonly where: string;
}

type ProcessHook = (process: ProcessInfo) => unknown;

/**
 * Lifecycle hooks. `on…Start` runs once the process is registered, before it does any work;
 * `on…Stop` when it begins to stop; `on…Exit` once it has stopped and deregistered. A hook may
 * be async: it is awaited. In fork mode a role's hooks run in that role's child process (which
 * imports your job modules, so define hooks next to your FirmQueue). `onError` receives errors
 * inside firm-queue's own machinery (a failed poll, heartbeat or hook), never a job's error.
 */
export interface LifecycleHooks {
  readonly onStart?: ProcessHook;
  readonly onStop?: ProcessHook;
  readonly onExit?: ProcessHook;
  readonly onWorkerStart?: ProcessHook;
  readonly onWorkerStop?: ProcessHook;
  readonly onWorkerExit?: ProcessHook;
  readonly onDispatcherStart?: ProcessHook;
  readonly onDispatcherStop?: ProcessHook;
  readonly onDispatcherExit?: ProcessHook;
  readonly onSchedulerStart?: ProcessHook;
  readonly onSchedulerStop?: ProcessHook;
  readonly onSchedulerExit?: ProcessHook;
  readonly onError?: (error: unknown, context: ErrorContext) => unknown;
}

/** A lifecycle event of one kind of process. */
export type LifecycleEvent = "Start" | "Stop" | "Exit";

const HOOK_NAMES = [
  "onStart",
  "onStop",
  "onExit",
  "onWorkerStart",
  "onWorkerStop",
  "onWorkerExit",
  "onDispatcherStart",
  "onDispatcherStop",
  "onDispatcherExit",
  "onSchedulerStart",
  "onSchedulerStop",
  "onSchedulerExit",
  "onError",
] as const;

/**
 * The hooks registered on one FirmQueue, and the only code that calls them: a hook that throws
 * is reported to `onError`, and an `onError` that throws is logged, so no hook can break a
 * supervisor or a role.
 */
export class HookSet {
  private readonly hooks: { [K in keyof LifecycleHooks]-?: NonNullable<LifecycleHooks[K]>[] };

  constructor(private readonly logger: Logger) {
    this.hooks = Object.fromEntries(HOOK_NAMES.map((name) => [name, []])) as never;
  }

  /** Add hooks; several hooks for one event run in the order they were added. */
  add(hooks: LifecycleHooks): void {
    if (typeof hooks !== "object" || hooks === null)
      throw new ConfigurationError("hooks must be an object of functions");
    for (const [name, hook] of Object.entries(hooks)) {
      if (!(HOOK_NAMES as readonly string[]).includes(name)) {
        throw new ConfigurationError(`Unknown hook "${name}" (known: ${HOOK_NAMES.join(", ")})`);
      }
      if (hook === undefined) continue;
      if (typeof hook !== "function") throw new ConfigurationError(`hook ${name} must be a function`);
      (this.hooks[name as keyof LifecycleHooks] as unknown[]).push(hook);
    }
  }

  /** Run the hooks of `event` for a process of `kind` (a supervisor runs onStart/onStop/onExit). */
  async run(kind: ProcessKind, event: LifecycleEvent, process: ProcessInfo): Promise<void> {
    const name = (kind === "Supervisor" ? `on${event}` : `on${kind}${event}`) as Exclude<
      keyof LifecycleHooks,
      "onError"
    >;
    for (const hook of this.hooks[name]) {
      try {
        await hook(process);
      } catch (error) {
        await this.error(error, { process, where: `${name} hook` });
      }
    }
  }

  /** Report an error in firm-queue's machinery: logged, then passed to every `onError` hook. */
  async error(error: unknown, context: ErrorContext): Promise<void> {
    this.logger.error(`${context.where} failed`, {
      processId: context.process?.id,
      kind: context.process?.kind,
      error,
    });
    for (const hook of this.hooks.onError) {
      try {
        await hook(error, context);
      } catch (hookError) {
        this.logger.error("onError hook threw", { where: context.where, error: hookError });
      }
    }
  }

  /** A synchronous reporter for pollers: fires {@link error} without waiting for it. */
  reporter(context: () => ErrorContext): (error: unknown) => void {
    return (error) => void this.error(error, context());
  }
}
