import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { CLI, ROOT } from "./support/processes.js";
import { TerminalSession, tmuxAvailable } from "./support/tmux.js";

const terminals = tmuxAvailable();

describeEachDatabase("CLI: destructive commands on a terminal (tmux)", (env) => {
  (terminals ? it : it.skip)(
    "queues clear asks first: no keeps the jobs, yes clears them in batches under a progress bar",
    { timeout: 90_000 },
    async () => {
      const firm = env.firm();
      const job = firm.defineJob("bulk", async () => {});
      const total = 10_000;
      for (let start = 0; start < total; start += 5000) {
        await job.enqueueAll(
          Array.from({ length: 5000 }, () => null),
          { queue: "bulk" },
        );
      }
      const terminal = await TerminalSession.start(ROOT);
      try {
        const clear = `node ${CLI} queues clear bulk --batch-size 50 --database-url '${env.url}'; echo "EXIT=$?"`;
        await terminal.type(clear);
        await terminal.waitForScreen((screen) => screen.includes("Delete the 10,000 ready job(s) of queue bulk?"));
        await terminal.keys("n");
        await terminal.waitForScreen((screen) => screen.includes("EXIT=1"));
        expect(await terminal.screen()).toContain("Nothing was cleared.");
        expect((await firm.inspect.queues()).find((queue) => queue.name === "bulk")?.ready).toBe(total);

        await terminal.type("clear");
        await terminal.type(clear);
        await terminal.waitForScreen((screen) => screen.includes("Delete the 10,000 ready job(s) of queue bulk?"));
        await terminal.keys("y");
        // 200 batches of 50: the bar is on screen while they run.
        const during = await terminal.waitForScreen(
          (screen) => /Deleted \d+ of ~10000/.test(screen) || /EXIT=\d/.test(screen),
        );
        expect(during).toMatch(/Deleted \d+ of ~10000/);
        const after = await terminal.waitForScreen((screen) => /EXIT=\d/.test(screen), 60_000);
        expect(after).toContain("Cleared 10000 waiting job(s) from queue bulk.");
        expect(after).toContain("EXIT=0");
        expect((await firm.inspect.queues()).find((queue) => queue.name === "bulk")).toBeUndefined();
      } finally {
        await terminal.close();
      }
    },
  );
});
