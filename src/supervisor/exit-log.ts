import type { Logger } from "../logger.js";

/** Why a process firm-queue runs (the CLI's supervisor, a fork-mode child) is about to exit. */
export interface ExitLog {
  /** Record the decision that ends the process (the last one recorded is logged at exit). */
  because(reason: string): void;
}

/**
 * Make every exit of this process say why in its log: the decision recorded with
 * {@link ExitLog.because} (a signal, a lost supervisor, a pruned row), or the uncaught error or
 * unhandled rejection that ends it, with its stack. An exit with no recorded decision says so,
 * which is a bug to report. `what` names the process in the lines ("supervisor", "worker child").
 */
export function logExits(logger: Logger, what: string): ExitLog {
  let reason: string | undefined;
  const fatal = (kind: string) => (error: unknown) => {
    reason = `${kind}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
    logger.error(`${what}: ${kind}; exiting`, {
      error,
      stack: error instanceof Error ? error.stack : undefined,
    });
    process.exit(1);
  };
  process.on("uncaughtException", fatal("uncaught error"));
  process.on("unhandledRejection", fatal("unhandled rejection"));
  // Runs for process.exit() and for an event loop that ran dry alike, synchronously.
  process.on("exit", (code) => {
    const fields = { code, reason: reason ?? "none recorded (the event loop ran out of work)" };
    if (reason === undefined || code !== 0) logger.error(`${what} exiting`, fields);
    else logger.info(`${what} exiting`, fields);
  });
  return {
    because(decision) {
      reason = decision;
    },
  };
}
