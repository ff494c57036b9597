import { expect, it } from "vitest";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { runCli } from "./support/processes.js";

describeEachDatabase("CLI: processes list and stats", (env) => {
  const cli = (args: string[]) => runCli([...args, "--database-url", env.url]);

  it("show the registered processes with their running jobs, and one screen of figures", async () => {
    const firm = env.firm();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = firm.defineJob("slow", () => held, { queue: "work" });
    const fails = firm.defineJob(
      "fails",
      async () => {
        throw new Error("disk full");
      },
      { queue: "work" },
    );
    await enqueued(fails.enqueue(null));
    await firm.drain();
    await firm.queues.pause("idle");
    const supervisor = await firm.start({ workers: [{ queues: "work", pollingInterval: 20 }], dispatchers: [] });
    try {
      const running = await enqueued(slow.enqueue({ n: 1 }));
      await expect.poll(async () => (await firm.getJob(running))?.state, { timeout: 10_000 }).toBe("claimed");
      await enqueued(slow.enqueue({ n: 2 }, { queue: "later", wait: "1h" }));

      const processes = await cli(["processes", "list"]);
      expect(processes.code, processes.stderr).toBe(0);
      expect(processes.stdout).toMatch(
        /ID\s+KIND\s+NAME\s+HOST\s+PID\s+SUPERVISOR\s+QUEUES\s+HEARTBEAT\s+STATUS\s+RUNNING/,
      );
      expect(processes.stdout).toMatch(
        new RegExp(`Worker\\s+\\S+\\s+\\S+\\s+${process.pid}\\s+\\d+\\s+work.*alive\\s+1: #${running} slow`),
      );
      expect(processes.stdout).toMatch(/Supervisor\s+\S+\s+\S+\s+\d+\s+-\s+/);
      const listed = JSON.parse((await cli(["processes", "list", "--json"])).stdout);
      expect(listed.map((row: { kind: string }) => row.kind)).toEqual(["Supervisor", "Worker"]);
      expect(listed[1]).toMatchObject({ stale: false, runningJobs: [expect.objectContaining({ id: running })] });

      const stats = await cli(["stats"]);
      expect(stats.code, stats.stderr).toBe(0);
      expect(stats.stdout).toMatch(/backlog 1 \(ready 0, scheduled 1, blocked 0\)\s+running 1\s+failed 1\s+latency -/);
      expect(stats.stdout).toMatch(/RATE\s+FINISHED\s+FAILED\nper second, last 10 s/);
      expect(stats.stdout).toMatch(/total, last hour\s+0\s+1/);
      // Per queue: counts, then jobs enqueued, finished and failed per second over the last 10 s
      // (how many of this test's jobs are still in that window depends on how fast the CLI started).
      expect(stats.stdout).toMatch(/QUEUE\s+READY\s+.*LATENCY\s+ENQ\/S\s+DONE\/S\s+FAIL\/S\s+STATUS/);
      expect(stats.stdout).toMatch(/idle\s+0\s+0\s+0\s+0\s+0\s+-\s+0\s+0\s+0\s+paused/);
      expect(stats.stdout).toMatch(/work\s+0\s+0\s+0\s+1\s+1\s+-\s+(0|0\.[12])\s+0\s+(0|0\.1)\s+active/);
      expect(stats.stdout).toMatch(
        /Newest failures:\nID\s+NAME\s+QUEUE\s+FAILED AT \(UTC\)\s+ERROR\n\d+\s+fails\s+work\s+\S+\s+Error: disk full/,
      );
      expect(stats.stdout).toMatch(new RegExp(`Worker.*1: #${running} slow`));
      const json = JSON.parse((await cli(["stats", "--json", "--failures", "1"])).stdout);
      expect(json).toMatchObject({
        totals: { ready: 0, scheduled: 1, blocked: 0, running: 1, failed: 1, backlog: 1, latency: 0 },
        rates: { lastHour: { finished: 0, failed: 1 }, perQueue: expect.any(Array) },
        recentFailures: [expect.objectContaining({ name: "fails" })],
      });
      expect(json.queues.map((queue: { name: string }) => queue.name)).toEqual(["idle", "later", "work"]);
      expect(json.processes).toHaveLength(2);
    } finally {
      release();
      await supervisor.stop();
    }
    const none = await cli(["processes", "list"]);
    expect(none.stdout).toContain("No process is registered");
  });
});
