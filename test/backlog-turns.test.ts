import { expect, it } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";

const JOBS = 8_000;

describeEachDatabase("a worker draining a backlog", (env) => {
  it("lets the process's timers run between its batches, long before the backlog is empty", async () => {
    const firm = env.firm();
    let done = 0;
    let doneWhenTimerRan: number | undefined;
    const noop = firm.defineJob("noop", async () => {
      // The first job sets a timer, as a heartbeat, a signal's handler or a web request would wait.
      if (done++ === 0) setTimeout(() => (doneWhenTimerRan = done), 0);
    });
    for (let from = 0; from < JOBS; from += 1_000)
      await noop.enqueueAll(Array.from({ length: 1_000 }, (_, i) => ({ i: from + i })));
    // A prefetch above the batch size: on SQLite, whose calls are synchronous, a worker that
    // wrote its finish batches one after another within a turn ran all 8,000 before any timer.
    const supervisor = await firm.start({ workers: [{ concurrency: 24, prefetch: 1_000 }], dispatchers: [] });
    try {
      await waitFor(() => done === JOBS, 30_000, "the backlog to drain");
    } finally {
      await supervisor.stop();
    }
    expect(doneWhenTimerRan).toBeDefined();
    // A turn runs what the worker may hold unwritten, twice its slots and prefetch (2,048 here),
    // and about one batch more; the finishes are written one batch per turn from then on.
    expect(doneWhenTimerRan!).toBeLessThan(JOBS / 2);
  });
});
