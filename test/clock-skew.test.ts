import { expect, it } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnNode, type Spawned } from "./support/processes.js";

const TEN_MINUTES = 10 * 60_000;

describeEachDatabase("hosts with clocks 10 minutes off", (env) => {
  /** A supervisor in a process whose clock is `skew` ms off. */
  async function skewed(skew: number, options: Record<string, unknown>): Promise<Spawned> {
    const run = spawnNode(["test/fixtures/skewed-process.mjs"], {
      SKEW_MS: String(skew),
      START_OPTIONS: JSON.stringify(options),
      FIRM_QUEUE_DATABASE_URL: env.url,
    });
    await waitFor(
      () => run.output().includes("ready") || run.child.exitCode !== null,
      20_000,
      "the skewed process to start",
    );
    if (!run.output().includes("ready")) throw new Error(`skewed process failed: ${run.output()}`);
    return run;
  }

  it("prune no live process and free no held slot", async () => {
    const firm = env.firm();
    let running = 0;
    let most = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const hold = firm.defineJob(
      "hold",
      async () => {
        running++;
        most = Math.max(most, running);
        await released;
        running--;
      },
      { concurrency: { key: "k", to: 1, duration: "5m" } },
    );
    const timings = { processHeartbeatInterval: 200, processAliveThreshold: 2000 };
    const here = await firm.start({
      workers: [{ queues: "*", concurrency: 2, pollingInterval: 50 }],
      dispatchers: [],
      ...timings,
    });
    const children: Spawned[] = [];
    try {
      // Behind: its heartbeats look 10 minutes old to a host clock. Ahead: to its own host clock
      // everyone else looks dead, and every semaphore looks expired (it runs maintenance often).
      children.push(await skewed(-TEN_MINUTES, { workers: [{ queues: "nothing" }], dispatchers: [], ...timings }));
      children.push(
        await skewed(TEN_MINUTES, {
          workers: [{ queues: "nothing" }],
          dispatchers: [{ pollingInterval: 100, concurrencyMaintenanceInterval: 100 }],
          ...timings,
        }),
      );
      const db = await env.db();
      const ids = async () =>
        (await db.selectFrom("firm_queue_processes").select("id").orderBy("id").execute()).map((row) => Number(row.id));
      const before = await ids();
      // Three supervisors, each with a worker; one dispatcher.
      expect(before).toHaveLength(7);
      await hold.enqueue(null);
      await hold.enqueue(null);
      await waitFor(() => running === 1, 10_000, "the first job to hold the slot");
      // Several alive thresholds and many maintenance passes.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(await ids()).toEqual(before);
      expect(most).toBe(1);
    } finally {
      release();
      for (const child of children) child.child.kill("SIGTERM");
      await Promise.all(children.map((child) => child.finished));
      await here.stop();
    }
  });
});
