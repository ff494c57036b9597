import { appendFileSync, closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { waitFor } from "./harness.js";
import { spawnCli, type Finished, type Spawned } from "./processes.js";
import type { Random } from "./chaos-settings.js";
import { isAlive } from "./supervised.js";
import { START_RETRY } from "../../src/supervisor/start-retry.js";

/**
 * How long a boot may take before the run fails: a cut during the boot can hold the supervisor's
 * start steps and then a child's for up to START_RETRY.giveUpAfter each, plus the tries themselves.
 */
const BOOT_WAIT_MS = 2 * START_RETRY.giveUpAfter + 30_000;

export const CHAOS_CONFIG = "test/fixtures/chaos.config.ts";

/** One `firm-queue start` of the run. */
export interface ChaosSupervisor {
  readonly pid: number;
  readonly spawned: Spawned;
  /** Set once the process has exited (the "exit" event: its children may live on). */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** How the test ended it, if it did. */
  endedBy: "kill" | "term" | null;
}

/** A supervisor that ended without the test ending it: a violation in itself. */
export interface UnexpectedExit {
  readonly pid: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** What it (and its children, which share its pipes) printed so far. */
  readonly output: () => string;
}

/**
 * The `firm-queue start` processes of a chaos run, on one database and one run log. Each runs in
 * a process group of its own, so the whole tree can be cleaned up even after the supervisor was
 * killed and left its children to finish on their own.
 */
export class ChaosCluster {
  readonly supervisors: ChaosSupervisor[] = [];
  readonly unexpectedExits: UnexpectedExit[] = [];
  private readonly read: string[] = [];
  private readBytes = 0;

  constructor(
    private readonly databaseUrl: string,
    readonly logFile: string,
    /** The `firm-queue start` config file (the high-availability runs add a scheduler). */
    private readonly config = CHAOS_CONFIG,
  ) {}

  /** Supervisors of the run that are up (not killed, not stopped, not exited). */
  get running(): ChaosSupervisor[] {
    return this.supervisors.filter((supervisor) => supervisor.exit === null && supervisor.endedBy === null);
  }

  /** The run log's complete lines so far (read incrementally: the log grows to tens of thousands of lines). */
  lines(): readonly string[] {
    if (!existsSync(this.logFile)) return this.read;
    const size = statSync(this.logFile).size;
    if (size > this.readBytes) {
      const chunk = Buffer.alloc(size - this.readBytes);
      const fd = openSync(this.logFile, "r");
      try {
        readSync(fd, chunk, 0, chunk.length, this.readBytes);
      } finally {
        closeSync(fd);
      }
      // Only up to the last newline: a line being written is taken next time, whole.
      const end = chunk.lastIndexOf(0x0a) + 1;
      this.readBytes += end;
      for (const line of chunk.subarray(0, end).toString("utf8").split("\n")) if (line !== "") this.read.push(line);
    }
    return this.read;
  }

  /** Start a supervisor and wait until it and its two workers and dispatcher are registered. */
  async startSupervisor(): Promise<ChaosSupervisor> {
    const spawned = spawnCli(
      ["start", "--config", this.config],
      { FIRM_QUEUE_DATABASE_URL: this.databaseUrl, CHAOS_LOG: this.logFile },
      { detached: true },
    );
    const supervisor: ChaosSupervisor = { pid: spawned.child.pid!, spawned, exit: null, endedBy: null };
    this.supervisors.push(supervisor);
    spawned.child.once("exit", (code, signal) => {
      supervisor.exit = { code, signal };
      if (supervisor.endedBy === null)
        this.unexpectedExits.push({ pid: supervisor.pid, code, signal, output: () => spawned.output() });
    });
    try {
      await waitFor(
        () => {
          if (supervisor.exit)
            throw new Error(
              `firm-queue start (pid ${supervisor.pid}) exited during boot: ${JSON.stringify(supervisor.exit)}\n${spawned.output()}`,
            );
          const children = this.registeredChildren(supervisor.pid);
          return (
            this.lines().includes(`up ${supervisor.pid}`) &&
            (children.Worker ?? 0) >= 2 &&
            (children.Dispatcher ?? 0) >= 1
          );
        },
        BOOT_WAIT_MS,
        `supervisor ${supervisor.pid} and its children registered`,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- its output ---\n${spawned.output()}`);
    }
    return supervisor;
  }

  /** Role processes (pid → kind) registered under `supervisorPid` and not known to be gone. */
  liveChildren(supervisorPid?: number): Map<number, string> {
    const children = new Map<number, string>();
    const parents = new Set(this.running.map((supervisor) => supervisor.pid));
    for (const line of this.lines()) {
      const [event, pid, kind, ppid] = line.split(" ");
      if (
        event === "ready" &&
        (supervisorPid === undefined ? parents.has(Number(ppid)) : Number(ppid) === supervisorPid)
      )
        children.set(Number(pid), kind!);
      else if (event === "kill" || event === "exit") children.delete(Number(pid));
    }
    for (const pid of children.keys()) if (!isAlive(pid)) children.delete(pid);
    return children;
  }

  /**
   * SIGKILL `pid`, bracketed in the run log: `killing` before the signal, `kill` after it. The
   * process died in between; what its death sets off in other processes (its claims recovered, its
   * key's next job started) may be logged before the `kill` line when this process is held up
   * between the signal and the write, so the log's analysis reads both (see KillWindows).
   */
  kill(pid: number, what: string): void {
    this.note(`killing ${pid} ${what}`);
    process.kill(pid, "SIGKILL");
    this.note(`kill ${pid} ${what}`);
  }

  /** Append a line of the test's own to the run log. */
  note(line: string): void {
    appendFileSync(this.logFile, `${line}\n`);
  }

  /** SIGKILL a random running supervisor (its children then finish their jobs and exit on their own). */
  killSupervisor(random: Random): number {
    const supervisor = random.pick(this.running);
    supervisor.endedBy = "kill";
    this.kill(supervisor.pid, "supervisor");
    return supervisor.pid;
  }

  /** TERM every running supervisor and wait for each to exit; returns how each ended. */
  async stop(): Promise<{ pid: number; finished: Finished }[]> {
    const stopping = this.running;
    for (const supervisor of stopping) {
      supervisor.endedBy = "term";
      supervisor.spawned.child.kill("SIGTERM");
    }
    return Promise.all(
      stopping.map(async (supervisor) => ({ pid: supervisor.pid, finished: await supervisor.spawned.finished })),
    );
  }

  /** Everything every supervisor (and its children, which share its pipes) printed. */
  output(): string {
    return this.supervisors.map((supervisor) => supervisor.spawned.output()).join("\n");
  }

  /** Kill whatever is left of every process tree of the run. Safe to call at any time. */
  destroy(): void {
    for (const supervisor of this.supervisors) {
      try {
        process.kill(-supervisor.pid, "SIGKILL");
      } catch {
        // the whole group is gone already
      }
    }
  }

  private registeredChildren(supervisorPid: number): Record<string, number> {
    const counts: Record<string, number> = { Worker: 0, Dispatcher: 0 };
    for (const kind of this.liveChildren(supervisorPid).values()) counts[kind] = (counts[kind] ?? 0) + 1;
    return counts;
  }
}
