import { format } from "node:util";
import { vi } from "vitest";
import { reportCommandError } from "../../src/cli/exit-status.js";
import { cliProgram } from "../../src/cli/program.js";

/*
 * The CLI run inside the test's process, as main.ts runs it: a fresh program parses the command
 * line, an error that escapes it is reported as main.ts reports it. Output and process.exit are
 * captured, and process.env (which the CLI writes the database URL and log flags into) is put
 * back afterwards. Many command lines fit in a second this way, where spawning one takes ~0.5 s.
 */

/** process.exit, turned into a throw so that the command stops where the real one would. */
class ExitCalled extends Error {
  constructor(readonly code: number) {
    super(`process.exit(${code})`);
  }
}

export interface CliRun {
  /** The exit status the process would end with. */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** An error that escaped the command to main.ts's handler (printed by reportCommandError), if any. */
  readonly escaped: unknown;
}

/** Run `firm-queue ...args` in this process with `env` added to the environment. One at a time. */
export async function runCliInProcess(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  const savedEnv = { ...process.env };
  let stdout = "";
  let stderr = "";
  const toStdout = (...parts: unknown[]) => void (stdout += `${format(...parts)}\n`);
  const toStderr = (...parts: unknown[]) => void (stderr += `${format(...parts)}\n`);
  const spies = [
    vi.spyOn(console, "log").mockImplementation(toStdout),
    vi.spyOn(console, "info").mockImplementation(toStdout),
    vi.spyOn(console, "error").mockImplementation(toStderr),
    vi.spyOn(console, "warn").mockImplementation(toStderr),
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: unknown) => {
      stdout += String(chunk);
      return true;
    }),
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: unknown) => {
      stderr += String(chunk);
      return true;
    }),
    vi.spyOn(process, "exit").mockImplementation((code?: string | number | null) => {
      throw new ExitCalled(Number(code ?? 0));
    }),
  ];
  process.exitCode = undefined;
  Object.assign(process.env, env);
  let code: number;
  let escaped: unknown;
  try {
    await cliProgram().parseAsync(["node", "firm-queue", ...args]);
    code = Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof ExitCalled) code = error.code;
    else {
      escaped = error;
      reportCommandError(error);
      code = Number(process.exitCode ?? 0);
    }
  } finally {
    for (const spy of spies) spy.mockRestore();
    process.exitCode = undefined;
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
    Object.assign(process.env, savedEnv);
  }
  return { code, stdout, stderr, escaped };
}
