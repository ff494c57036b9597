import { expect, test } from "vitest";
import { ConfigurationError } from "../src/index.js";
import { describeEachDatabaseAtOnce } from "./support/harness.js";

/** Wait until the current whole second is over, so the window (which ends at it) holds what came before. */
async function nextSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
}

describeEachDatabaseAtOnce("firm.inspect.queueThroughput", (env) => {
  test("counts jobs enqueued, finished and failed for good per queue over the window", async () => {
    const firm = env.firm();
    const mail = firm.defineJob("mail", async () => {});
    const flaky = firm.defineJob(
      "flaky",
      async () => {
        throw new Error("down");
      },
      { retry: { attempts: 1 } },
    );
    await mail.enqueueAll([{}, {}, {}], { queue: "a" });
    await mail.enqueueAll([{}, {}], { queue: "b" });
    await flaky.enqueue({}, { queue: "b" });
    await mail.enqueue({}, { queue: "c", wait: "1h" });
    await firm.drain();
    await nextSecond();

    const { start, end, queues } = await firm.inspect.queueThroughput();
    expect(end.getTime() - start.getTime()).toBe(10_000);
    expect(end.getTime() % 1000).toBe(0);
    expect(queues).toEqual([
      { queue: "a", enqueued: 3, enqueuedExact: true, finished: 3, failed: 0 },
      { queue: "b", enqueued: 3, enqueuedExact: true, finished: 2, failed: 1 },
      { queue: "c", enqueued: 1, enqueuedExact: true, finished: 0, failed: 0 },
    ]);

    // Reading only the newest two jobs counts those two and says the count stops there.
    const bounded = await firm.inspect.queueThroughput({ enqueuedUpTo: 2 });
    expect(bounded.queues.reduce((sum, queue) => sum + queue.enqueued, 0)).toBe(2);
    expect(bounded.queues.every((queue) => !queue.enqueuedExact)).toBe(true);
    expect(bounded.queues.find((queue) => queue.queue === "a")).toMatchObject({ finished: 3 });
  });

  test("leaves out what happened before the window, and refuses bad options", async () => {
    const firm = env.firm();
    const mail = firm.defineJob("mail", async () => {});
    await mail.enqueueAll([{}, {}], { queue: "a" });
    await firm.drain();
    await nextSecond();
    await nextSecond();
    expect((await firm.inspect.queueThroughput({ windowMs: 1000 })).queues).toEqual([]);
    expect((await firm.inspect.queueThroughput({ windowMs: 60_000 })).queues).toEqual([
      { queue: "a", enqueued: 2, enqueuedExact: true, finished: 2, failed: 0 },
    ]);
    await expect(firm.inspect.queueThroughput({ windowMs: 999 })).rejects.toThrow(ConfigurationError);
    await expect(firm.inspect.queueThroughput({ enqueuedUpTo: 0 })).rejects.toThrow(ConfigurationError);
    await expect(firm.inspect.queueThroughput({ window: 1 } as never)).rejects.toThrow(
      /inspect\.queueThroughput option/,
    );
  });
});
