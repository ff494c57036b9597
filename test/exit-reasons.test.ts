import { expect, it } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnCli } from "./support/processes.js";

describeEachDatabase("every exit of firm-queue start says why", (env) => {
  it("logs the reason of each child's and the supervisor's exit: a crash with its stack, a signal", async () => {
    const firm = env.firm();
    const host = spawnCli(
      ["start", "--require", "test/fixtures/hog-jobs.mjs", "--mode", "fork", "--polling-interval", "50ms"],
      { FIRM_QUEUE_DATABASE_URL: env.url, FIRM_QUEUE_LOG_LEVEL: "info" },
    );
    try {
      await waitFor(() => /supervisor started/.test(host.output()), 30_000, "the supervisor started");
      await firm.enqueue("explode", {}, { undeclared: true });
      await waitFor(() => /child process replaced/.test(host.output()), 30_000, "the crashed worker replaced");
      host.child.kill("SIGTERM");
      const exit = await host.finished;
      expect(exit.code).toBe(0);
      const log = exit.stderr;
      // The crash: the error and where it was thrown, then the exit line, then the supervisor's reaping.
      expect(log).toMatch(
        /worker child: uncaught error; exiting error="Error: exploded outside the handler" stack=.*hog-jobs\.mjs/,
      );
      expect(log).toMatch(/worker child exiting code=1 reason="uncaught error: Error: exploded outside the handler"/);
      expect(log).toMatch(/child process exited abnormally.*exit="exit code 1"/);
      // The stop: each child says which signal, the supervisor why it stopped and how it exits.
      expect(log).toMatch(/worker child exiting code=0 reason=SIGTERM/);
      expect(log).toMatch(/dispatcher child exiting code=0 reason=SIGTERM/);
      expect(log).toMatch(/child process stopped .*exit="exit code 0"/);
      expect(log).toMatch(/firm-queue start exiting code=0 reason="stopped on SIGTERM"/);
      expect(log).not.toMatch(/none recorded/);
    } finally {
      host.child.kill("SIGKILL");
    }
  }, 90_000);
});
