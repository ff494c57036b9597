import { expect, it } from "vitest";
import { describeEachDatabaseAtOnce, waitFor } from "./support/harness.js";

// The databases side by side: each waits on a 1.5 s job and 25 short ones.
describeEachDatabaseAtOnce("a semaphore that expired under a long job", (env) => {
  it("once the long job ends, the limit is `to` again: its release returns no slot to the new semaphore", async () => {
    const firm = env.firm();
    let longDone = false;
    let running = 0;
    let mostAfterLong = 0;
    let shortsDone = 0;
    const limit = { key: "k", to: 1, duration: 300 };
    const long = firm.defineJob(
      "long",
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        longDone = true;
      },
      { concurrency: limit },
    );
    const short = firm.defineJob(
      "short",
      async () => {
        running++;
        if (longDone) mostAfterLong = Math.max(mostAfterLong, running);
        await new Promise((resolve) => setTimeout(resolve, 150));
        if (longDone) mostAfterLong = Math.max(mostAfterLong, running);
        running--;
        shortsDone++;
      },
      { concurrency: { ...limit, group: "long" } },
    );
    await long.enqueue(null);
    for (let index = 0; index < 25; index++) await short.enqueue(null);
    const supervisor = await firm.start({
      workers: [{ queues: "*", concurrency: 5, pollingInterval: 50 }],
      dispatchers: [{ pollingInterval: 100, concurrencyMaintenanceInterval: 100 }],
    });
    try {
      await waitFor(() => shortsDone === 25, 30_000, "every short job to run");
    } finally {
      await supervisor.stop();
    }
    expect(longDone).toBe(true);
    expect(mostAfterLong).toBe(1);
  });
});
