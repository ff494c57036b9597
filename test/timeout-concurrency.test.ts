import { expect, it } from "vitest";
import { describeEachDatabaseAtOnce, waitFor } from "./support/harness.js";

describeEachDatabaseAtOnce("timeouts under a concurrency limit", (env) => {
  it("a timed-out handler that ignores its signal keeps its slot until it really ends", async () => {
    const firm = env.firm();
    let running = 0;
    let most = 0;
    let ended = 0;
    const job = firm.defineJob(
      "stubborn",
      async () => {
        running++;
        most = Math.max(most, running);
        // Ignores its AbortSignal on purpose.
        await new Promise((resolve) => setTimeout(resolve, 600));
        running--;
        ended++;
      },
      { timeout: 100, retry: { attempts: 1 }, concurrency: { key: "all", to: 1, duration: "5m" } },
    );
    for (let index = 0; index < 4; index++) await job.enqueue(null);
    const supervisor = await firm.start({
      workers: [{ queues: "*", concurrency: 4, pollingInterval: 50 }],
      dispatchers: [{ pollingInterval: 100 }],
    });
    try {
      await waitFor(() => ended === 4, 20_000, "every handler to end");
    } finally {
      await supervisor.stop();
    }
    expect(most).toBe(1);
  });
});
