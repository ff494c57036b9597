import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A child process whose output is collected; `finished` resolves when it exits. */
export interface Spawned {
  readonly child: ChildProcess;
  readonly finished: Promise<Finished>;
  output(): string;
}

/** Run the built CLI (`npm test` builds it first) with extra environment variables. */
export function spawnCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  options: { detached?: boolean } = {},
): Spawned {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" (npm test does it for you)`);
  return spawnNode([CLI, ...args], env, options);
}

/** `detached`: the child leads a process group of its own (signal the whole group with a negative pid, as a terminal's Ctrl-C does). */
export function spawnNode(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  options: { detached?: boolean } = {},
): Spawned {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached ?? false,
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const finished = new Promise<Finished>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, finished, output: () => stdout + stderr };
}

/** Run the CLI to completion. */
export function runCli(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<Finished> {
  return spawnCli(args, env).finished;
}

/**
 * Stop every process in `running` (TERM, then KILL after 10 s) and empty the list. Call it from
 * an `afterEach` registered inside `describeEachDatabase`'s body: after-hooks run in reverse, so it
 * then runs before the harness empties the tables, and no worker is still writing while they are
 * emptied (a worker recording its job while the jobs are deleted can deadlock with the cascade).
 */
export async function stopProcesses(running: Spawned[]): Promise<void> {
  for (const process of running.splice(0)) {
    if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill("SIGTERM");
    const killer = setTimeout(() => process.child.kill("SIGKILL"), 10_000);
    await process.finished.catch(() => undefined);
    clearTimeout(killer);
  }
}
