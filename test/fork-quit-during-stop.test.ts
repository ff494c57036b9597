import { expect, it } from "vitest";
import { countRows, describeEachDatabase, enqueued } from "./support/harness.js";
import { installFinishWriteFault } from "./support/faults.js";
import { isAlive, startSupervisor, waitForProcesses, waitWhile } from "./support/supervised.js";

/*
 * QUIT during a graceful stop, in a real `firm-queue start` fork child (issue 10, defect 8): the
 * child stops waiting for the handler still running and puts that job back in line, but a job
 * whose handler has already returned is never put back: the child waits for its finish to be
 * written, then exits as the graceful stop would.
 */
describeEachDatabase("QUIT during a graceful stop (fork mode)", (env) => {
  it("releases the job still running, waits for the finish write of the job that already ran, exits 0", async () => {
    const firm = env.firm();
    const db = await env.db();
    // While on, marking a job finished fails: its write is retried and stays in flight.
    const fault = await installFinishWriteFault(db, env.dialect);
    // A shutdown timeout the TERM would wait for: only the QUIT can cut the stop short.
    const run = startSupervisor(env, ["--shutdown-timeout", "60s"]);
    try {
      const rows = await waitForProcesses(db, run);
      const worker = rows.find((row) => row.kind === "Worker")!;
      const running = await enqueued(firm.enqueue("sleep", { ms: 60_000 }, { undeclared: true }));
      await waitWhile(run, () => run.jobEvents().includes(`start ${running} ${worker.pid}`), "the long job started");
      await fault.on();
      const settled = await enqueued(firm.enqueue("record", null, { undeclared: true }));
      await waitWhile(
        run,
        () => run.jobEvents().includes(`done ${settled} ${worker.pid}`),
        "the short job's handler ran",
      );
      await waitWhile(
        run,
        () => run.output().includes("recording the job's outcome failed"),
        "its finish write failing",
      );

      run.child.kill("SIGTERM");
      await waitWhile(
        run,
        () => run.hookEvents().includes(`onWorkerStop Worker ${worker.pid}`),
        "the worker to begin its graceful stop",
      );
      run.child.kill("SIGQUIT");
      // The QUIT reached the worker: the job whose handler is still running is back in line.
      await waitWhile(run, async () => (await firm.getJob(running))?.state === "ready", "the running job released");
      // The finish write is still failing, and the worker waits for it rather than exiting.
      expect(isAlive(worker.pid)).toBe(true);
      expect(await firm.getJob(settled)).toMatchObject({ state: "claimed" });
      await fault.off();

      const result = await run.finished;
      expect(result.code, run.output()).toBe(0);
      expect(await firm.getJob(settled), run.output()).toMatchObject({ state: "finished", attempts: 1 });
      expect(await firm.getJob(running)).toMatchObject({ state: "ready", attempts: 0 });
      // Each ran once: the finished job was never put back in line and run again.
      expect(run.jobEvents().filter((line) => line.startsWith(`done ${settled} `))).toHaveLength(1);
      expect(run.jobEvents().filter((line) => line.startsWith(`start ${running} `))).toHaveLength(1);
      expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
      expect(await countRows(db, "firm_queue_processes")).toBe(0);
    } finally {
      // After a failure: nothing left running, no trigger left behind.
      await fault.off();
      if (run.child.exitCode === null && run.child.signalCode === null) {
        run.child.kill("SIGQUIT");
        const timer = setTimeout(() => run.child.kill("SIGKILL"), 20_000);
        await run.finished;
        clearTimeout(timer);
      }
      await fault.remove();
    }
  });
});
