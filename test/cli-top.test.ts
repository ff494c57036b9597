import { describe, expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { CLI, ROOT, runCli } from "./support/processes.js";
import { TerminalSession, tmuxAvailable } from "./support/tmux.js";

describe("CLI: top off a terminal", () => {
  it("refuses with exit status 2, pointing at stats --json", async () => {
    const result = await runCli(["top", "--database-url", "sqlite::memory:"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("top: needs a terminal; in scripts use `firm-queue stats --json`");
    expect((await runCli(["top", "--interval", "10ms"])).code).toBe(2);
  });
});

const terminals = tmuxAvailable();

describeEachDatabase("CLI: top in a real terminal (tmux)", (env) => {
  (terminals ? it : it.skip)(
    "draws the queues live, refreshes, and quits on q or Ctrl-C giving the terminal back",
    {
      timeout: 90_000,
    },
    async () => {
      const firm = env.firm();
      const job = firm.defineJob("mailer", async () => {});
      await job.enqueueAll([{}, {}, {}], { queue: "mail" });
      await firm.queues.pause("paused-q");
      const terminal = await TerminalSession.start(ROOT);
      try {
        const top = `node ${CLI} top --database-url '${env.url}' --interval 300ms; echo "EXIT=$?"`;
        await terminal.type(`echo before-top; ${top}`);
        const first = await terminal.waitForScreen((screen) => /mail\s+3\s+3\s+0\s+0\s+0\s+0\s+\S+/.test(screen));
        expect(first).toMatch(/^firm-queue top\s+\S+Z\s+every 300 ms\s+\(q or Ctrl-C quits\)/m);
        expect(first).toMatch(/paused-q\s+0\s+0\s+0\s+0\s+0\s+0\s+-\s+0\s+0\s+0\s+paused/);
        expect(first).toContain("No job is running.");
        // Drawn on the alternate screen, with the cursor hidden: the shell's lines are out of sight.
        expect(first).not.toContain("before-top");
        expect(await terminal.pane("alternate_on")).toBe("1");
        expect(await terminal.pane("cursor_flag")).toBe("0");

        expect(first).toMatch(/QUEUE\s+BACKLOG\s+.*LATENCY\s+ENQ\/S\s+DONE\/S\s+FAIL\/S\s+STATUS/);
        await job.enqueueAll([{}, {}], { queue: "mail" });
        await terminal.waitForScreen((screen) => /mail\s+5\s+5\s+/.test(screen));
        // Once the jobs ran, the queue has no unfinished job left but keeps a row for its rates
        // over the last 10 s: 5 finished there is 0.5/s.
        await firm.drain();
        await terminal.waitForScreen((screen) =>
          /mail\s+0\s+0\s+0\s+0\s+0\s+0\s+-\s+\S+\s+0\.5\s+0\s+active/.test(screen),
        );

        await terminal.keys("q");
        const after = await terminal.waitForScreen((screen) => screen.includes("EXIT=0"));
        expect(after).toContain("before-top");
        expect(after).not.toContain("firm-queue top");
        expect(await terminal.pane("alternate_on")).toBe("0");
        expect(await terminal.pane("cursor_flag")).toBe("1");
        // The terminal is out of raw mode again: what is typed is echoed and runs.
        await terminal.type("echo typed-$((20+22))");
        await terminal.waitForScreen(
          (screen) => screen.includes("echo typed-$((20+22))") && screen.includes("typed-42"),
        );

        await terminal.type("clear");
        await terminal.type(top);
        await terminal.waitForScreen((screen) => /paused-q\s+0\s+/.test(screen));
        await terminal.keys("C-c");
        await terminal.waitForScreen((screen) => screen.includes("EXIT=0"));
        expect(await terminal.pane("alternate_on")).toBe("0");
        expect(await terminal.pane("cursor_flag")).toBe("1");
      } finally {
        await terminal.close();
      }
    },
  );
});
