import { expect } from "vitest";
import { runCli } from "./processes.js";

/**
 * Run the CLI with `args` and expect it to refuse them before doing anything: exit code 2 (bad usage) and
 * `message` on stderr. The database URL it gets is an in-memory SQLite one, so a command that
 * went ahead would find nothing to act on rather than touch a test database.
 */
export async function expectCliRefuses(args: readonly string[], message: string): Promise<void> {
  const result = await runCli([...args, "--database-url", "sqlite::memory:"]);
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toContain(message);
}
