import { confirm, isCancel } from "@clack/prompts";
import { SingleBar } from "cli-progress";
import { UsageError } from "./usage-error.js";

/**
 * Whether a person is at the terminal: standard input and standard error are both terminals.
 * Prompts and progress bars go to standard error, so standard output stays clean for `--json`
 * or a pipe even in an interactive session.
 */
export function interactive(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true;
}

/**
 * Refuse a destructive command up front when it has no `--yes` and nobody is at a terminal to
 * ask, before it connects or reads anything: a {@link UsageError}.
 */
export function checkConsent(command: string, yes: boolean | undefined): void {
  if (yes !== true && !interactive()) {
    throw new UsageError(command, "this changes many jobs for good; pass --yes to confirm (no terminal to ask on)");
  }
}

/**
 * Ask before a destructive command (clearing a queue, deleting failed jobs, cancelling by
 * filter). `--yes` goes ahead without asking; on a terminal the person is asked; anywhere else
 * (a script, a cron job) the command is refused with a {@link UsageError}, since nobody can
 * answer. Resolves to whether to go ahead.
 */
export async function confirmed(command: string, question: string, yes: boolean | undefined): Promise<boolean> {
  if (yes === true) return true;
  checkConsent(command, yes);
  const answer = await confirm({ message: question, initialValue: false, output: process.stderr });
  return !isCancel(answer) && answer;
}

/** Progress of a command that works through many jobs in batches. */
export interface Progress {
  /** Whether a bar is on the screen (false off a terminal, where callers may log lines instead). */
  readonly shown: boolean;
  /** `done` more jobs were handled. */
  advance(done: number): void;
  /** The work is over: the bar goes away (the command prints its result itself). */
  stop(): void;
}

/**
 * A progress bar on standard error for up to `total` jobs when a person is at the terminal
 * (the total is an estimate: jobs may come and go while the command runs); elsewhere nothing,
 * so logs and pipes get only the command's result.
 */
export function progressBar(label: string, total: number): Progress {
  if (!interactive() || total <= 0) return { shown: false, advance: () => {}, stop: () => {} };
  // cli-progress redraws inside update() when a frame is due (synchronousUpdate), not only on its
  // timer: on SQLite the batches run back to back without giving timers a turn.
  const bar = new SingleBar({
    stream: process.stderr,
    format: `${label} {value} of ~{total} [{bar}] {percentage}%`,
    barCompleteChar: "#",
    barIncompleteChar: "-",
    hideCursor: true,
    clearOnComplete: true,
    synchronousUpdate: true,
    fps: 10,
  });
  bar.start(total, 0);
  let done = 0;
  return {
    shown: true,
    advance(count: number) {
      done += count;
      // Jobs that arrived after the count was taken: grow the total rather than pass 100%.
      if (done > bar.getTotal()) bar.setTotal(done);
      bar.increment(count);
    },
    stop() {
      bar.stop();
    },
  };
}
