import { describe, expect, it } from "vitest";
import type { ClaimedJob } from "../src/database/claimed-job.js";
import type { JobRunner } from "../src/roles/job-runner.js";
import { RunningJobs } from "../src/roles/running-jobs.js";

// A handler's end frees its slot from a microtask: the worker's slot handler runs after the
// runner's call returns, and what it throws reaches the worker's error handler instead of
// escaping as an uncaught error of the process.
describe("RunningJobs", () => {
  const job = { id: 1, class_name: "noop", queue_name: "default", attempts: 0 } as unknown as ClaimedJob;

  it("frees the slot after the handler's end is reported, and hands what the slot handler throws to onError", async () => {
    const order: string[] = [];
    const runner = {
      run: async (_job: ClaimedJob, _abort: unknown, onSettled: (putsBack: boolean) => void) => {
        onSettled(false);
        order.push("settled reported");
        return "finished";
      },
    } as unknown as JobRunner;
    const errors: unknown[] = [];
    const thrown = new Error("slot handler failed");
    let calls = 0;
    const running = new RunningJobs(
      runner,
      () => {
        calls++;
        order.push(`slot freed ${calls}`);
        if (calls === 1) throw thrown;
      },
      (error) => errors.push(error),
    );
    running.start(job);
    expect(running.handlersRunning).toBe(0);
    await running.allDone();
    await new Promise((resolve) => setImmediate(resolve));
    expect(order[0]).toBe("settled reported");
    expect(order).toContain("slot freed 1");
    expect(errors).toEqual([thrown]);
    expect(running.size).toBe(0);
  });
});
