import { emitKeypressEvents } from "node:readline";
import { type Command, InvalidArgumentError, Option } from "commander";
import { withCommonOptions, withFirm } from "./command-kit.js";
import type { CliHelpers } from "./command-kit.js";
import { aliveThresholdOption } from "./processes-command.js";
import { takeSnapshot, type QueueSnapshot } from "./queue-snapshot.js";
import { renderTopFrame } from "./top-screen.js";
import { UsageError } from "./usage-error.js";
import { toMilliseconds } from "../duration.js";
import type { FirmQueue } from "../firm-queue.js";

// The few terminal controls top needs (xterm/VT100, which every terminal in use understands).
const ALTERNATE_SCREEN = "\x1b[?1049h";
const MAIN_SCREEN = "\x1b[?1049l";
const HIDE_CURSOR = "\x1b[?25l";
const SHOW_CURSOR = "\x1b[?25h";
const HOME = "\x1b[H";
const CLEAR_LINE_END = "\x1b[K";
const CLEAR_SCREEN_END = "\x1b[J";

interface TopFlags {
  readonly interval: number;
  readonly aliveThreshold: string;
}

/** `firm-queue top`: a live view of the queue in the terminal, like top(1). */
export function registerTopCommand(program: Command, helpers: CliHelpers): void {
  withCommonOptions(program.command("top"), helpers)
    .description(
      "A live view refreshed every second: queues with their backlog, rates, running jobs, newest failures and " +
        "processes. q or Ctrl-C quits and gives the terminal back as it was. Needs a terminal (use stats --json in scripts).",
    )
    .addOption(
      new Option("--interval <duration>", 'time between refreshes, e.g. "1s", "500ms"')
        .argParser(intervalArgument)
        .default(1000, "1s"),
    )
    .addOption(aliveThresholdOption())
    .action((flags: TopFlags) => {
      if (!process.stdout.isTTY || !process.stdin.isTTY)
        throw new UsageError("top", "needs a terminal; in scripts use `firm-queue stats --json`");
      return withFirm(helpers, flags, (firm) => runTop(firm, flags));
    });
}

/** Draw frames until q or Ctrl-C (or TERM/HUP), then put the terminal back as it was. */
async function runTop(firm: FirmQueue, flags: TopFlags): Promise<void> {
  const out = process.stdout;
  const input = process.stdin;
  let snapshot: QueueSnapshot | null = null;
  let problem: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let quit = () => {};
  const done = new Promise<void>((resolve) => {
    quit = resolve;
  });

  const draw = () => {
    const lines = renderTopFrame(
      snapshot,
      { width: out.columns || 80, height: out.rows || 24 },
      flags.interval,
      problem,
    );
    out.write(HOME + lines.map((line) => line + CLEAR_LINE_END).join("\n") + CLEAR_SCREEN_END);
  };
  const refresh = async () => {
    try {
      snapshot = await takeSnapshot(firm, { aliveThreshold: flags.aliveThreshold, failures: 5 });
      problem = undefined;
    } catch (error) {
      // Keep the last figures on screen and say why they are old; the next refresh tries again.
      problem = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    }
    if (stopped) return;
    draw();
    timer = setTimeout(refresh, flags.interval);
  };
  const onKey = (text: string | undefined, key: { name?: string; ctrl?: boolean } | undefined) => {
    if (text === "q" || text === "Q" || (key?.ctrl && key.name === "c")) quit();
  };
  const onSignal = () => quit();

  out.write(ALTERNATE_SCREEN + HIDE_CURSOR);
  emitKeypressEvents(input);
  input.setRawMode(true);
  input.on("keypress", onKey);
  input.resume();
  out.on("resize", draw);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);
  try {
    draw();
    void refresh();
    await done;
  } finally {
    stopped = true;
    clearTimeout(timer);
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.off(signal, onSignal);
    out.off("resize", draw);
    input.off("keypress", onKey);
    input.setRawMode(false);
    input.pause();
    out.write(SHOW_CURSOR + MAIN_SCREEN);
  }
}

function intervalArgument(text: string): number {
  let ms: number;
  try {
    ms = toMilliseconds(/^\d+$/.test(text) ? Number(text) : text, "--interval");
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  if (ms < 100) throw new InvalidArgumentError("must be at least 100ms");
  return ms;
}
