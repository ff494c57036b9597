import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { spawnNode } from "./support/processes.js";

describeEachDatabase("a stopped in-process worker", (env) => {
  // The worker's shutdown waited for its jobs against a timer of the whole shutdown timeout, and
  // left that timer running when the jobs ended first: a script that stopped and closed firm-queue
  // stayed alive for 5 s more.
  it("leaves no timer behind once the supervisor has stopped and the instance is closed", async () => {
    const ran = await spawnNode(["test/fixtures/start-stop-timers.mjs", env.url]).finished;
    expect(ran.stderr).toBe("");
    expect(ran.stdout.trim()).toBe("[]");
  });
});
