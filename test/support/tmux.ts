import { execFile, execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";

const run = promisify(execFile);
const inCi = process.env.CI !== undefined && process.env.CI !== "false" && process.env.CI !== "0";

/**
 * Whether terminal tests can run here: they need tmux. Without it they are skipped with a loud
 * warning; with CI set that is an error instead (`.ci/run` installs it).
 */
export function tmuxAvailable(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    if (inCi) throw new Error("tmux is missing: CI must run the terminal tests (apt-get install tmux)");
    console.warn("\n[firm-queue] !!! terminal tests SKIPPED: no tmux (apt-get install tmux) !!!\n");
    return false;
  }
}

/**
 * A real terminal: a tmux session on a server of its own (its own socket, no config file)
 * running a shell. Type into it with `type` and `keys`, read the screen with `screen`.
 */
export class TerminalSession {
  private readonly socket = `firm-queue-test-${randomUUID().slice(0, 8)}`;

  private constructor(readonly cwd: string) {}

  /** Start a `width` × `height` terminal running bash with a plain prompt, in `cwd`. */
  static async start(cwd: string, width = 160, height = 50): Promise<TerminalSession> {
    const session = new TerminalSession(cwd);
    await session.tmux(
      "new-session",
      "-d",
      "-s",
      "main",
      "-x",
      String(width),
      "-y",
      String(height),
      "-c",
      cwd,
      "env PS1='$ ' bash --norc --noprofile",
    );
    return session;
  }

  /** Type `text` and press Enter. */
  async type(text: string): Promise<void> {
    await this.tmux("send-keys", "-t", "main", "-l", text);
    await this.tmux("send-keys", "-t", "main", "Enter");
  }

  /** Press keys by tmux's names: `q`, `C-c`, `Enter`. */
  async keys(...keys: string[]): Promise<void> {
    await this.tmux("send-keys", "-t", "main", ...keys);
  }

  /** The text on the screen now. */
  async screen(): Promise<string> {
    return (await this.tmux("capture-pane", "-p", "-t", "main")).stdout;
  }

  /** A tmux format variable of the pane: `alternate_on`, `cursor_flag`, … */
  async pane(variable: string): Promise<string> {
    return (await this.tmux("display-message", "-p", "-t", "main", `#{${variable}}`)).stdout.trim();
  }

  /** Wait until `check` accepts the screen; the screen, or an error showing the last one. */
  async waitForScreen(check: (screen: string) => boolean, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let screen = "";
    while (Date.now() < deadline) {
      screen = await this.screen();
      if (check(screen)) return screen;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the terminal never showed what was expected; last screen:\n${screen}`);
  }

  /** Stop the session and its tmux server. */
  async close(): Promise<void> {
    await this.tmux("kill-server").catch(() => undefined);
  }

  private tmux(...args: string[]) {
    return run("tmux", ["-L", this.socket, "-f", "/dev/null", ...args], { cwd: this.cwd, env: process.env });
  }
}
