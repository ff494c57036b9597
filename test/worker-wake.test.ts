import { expect, it } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";

describeEachDatabase("a worker that sleeps until woken", (env) => {
  it("is woken by its own ended jobs after a poll that found its slots and buffer full, and claims jobs another process enqueued", async () => {
    // The worker runs in this FirmQueue; the jobs come from another, as from a web process, so
    // no in-process signal of new jobs reaches it (PostgreSQL's LISTEN would, the others have none).
    const worker = env.firm();
    const producer = env.firm();
    const ran: number[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    worker.defineJob("gated", async (args: { n: number }) => {
      ran.push(args.n);
      await gate;
    });
    const gated = producer.declareJob<{ n: number }>("gated");
    // Four jobs for a worker that may hold five (one slot, four ahead): its first claim does not fill
    // its capacity, one starts and three wait in its buffer.
    await gated.enqueueAll([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    const supervisor = await worker.start({
      workers: [{ queues: "*", concurrency: 1, prefetch: 4, pollingInterval: 20 }],
      dispatchers: [],
    });
    try {
      await waitFor(() => ran.length === 1, 10_000, "the first job to start");
      // Polls meanwhile find the slot taken and the buffer above half full: they sleep until woken.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await gated.enqueue({ n: 5 });
      open();
      // The buffered jobs start as the slot frees; the fifth needs a claim, which needs a wake-up.
      await waitFor(() => ran.length === 5, 10_000, "the job enqueued by the other process to run");
      expect(ran).toEqual([1, 2, 3, 4, 5]);
    } finally {
      open();
      await supervisor.stop();
    }
  });
});
