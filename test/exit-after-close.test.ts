import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { spawnNode } from "./support/processes.js";

const ROLES = ["worker", "dispatcher", "scheduler", "drain", "dashboard", "metrics"] as const;
const MODES = ["async", "fork"] as const;
/** What "at once" means here: far above a process's own exit cost, far below any timer firm-queue sets. */
const EXIT_WITHIN_MS = 500;

describeEachDatabase("a process after stop() and close()", (env) => {
  // Every role, run in a child process that does its work, stops and closes firm-queue, and then
  // does nothing: a timer, socket or child process left behind would keep it alive (the worker's
  // shutdown wait once kept a script alive 5 s after close()).
  for (const mode of MODES) {
    for (const role of ROLES) {
      it(`exits at once: ${role}, ${mode} mode`, async () => {
        const run = spawnNode(["test/fixtures/exit-after-close.mjs", role, mode], {
          FIRM_QUEUE_DATABASE_URL: env.url,
        });
        let closedAt: number | undefined;
        run.child.stdout!.on("data", (chunk: Buffer) => {
          if (closedAt === undefined && chunk.toString().includes("closed")) closedAt = Date.now();
        });
        const finished = await run.finished;
        const exitedAt = Date.now();
        expect(finished.stderr, "nothing holds the process up, nothing fails").toBe("");
        expect(finished.code).toBe(0);
        expect(closedAt, "the fixture closed firm-queue").toBeDefined();
        expect(exitedAt - closedAt!, `ms from close() to exit`).toBeLessThan(EXIT_WITHIN_MS);
      }, 60_000);
    }
  }
});
