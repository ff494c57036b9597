import { expect, it } from "vitest";
import { describeEachDatabaseAtOnce, enqueued, waitFor } from "./support/harness.js";

/*
 * A job that a worker's own process makes ready inside a transaction (a flow's parent released by
 * its last child's finish, a blocked job promoted by the finish that frees its slot) wakes that
 * process's waiting workers once the transaction commits. Polling every minute, a worker left to
 * its next poll would not run the job within these tests' 10 s on SQLite or MariaDB (PostgreSQL's
 * own notification of new ready rows wakes it there too). No dispatcher runs.
 */
describeEachDatabaseAtOnce("workers woken by jobs their own process made ready", (env) => {
  const sleepy = { workers: [{ queues: "*", pollingInterval: 60_000 }], dispatchers: [] };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

  it("a flow's parent runs once its last child's finish commits", async () => {
    const firm = env.firm();
    firm.defineJob("child", async () => {});
    firm.defineJob("parent", async () => {});
    const supervisor = await firm.start(sleepy);
    try {
      // The first poll finds nothing: the worker sleeps.
      await settle();
      const flow = await firm.flow({ name: "parent", args: null, children: [{ name: "child", args: null }] });
      await waitFor(async () => (await firm.getJob(flow.id!))?.state === "finished", 10_000, "the parent to run");
    } finally {
      await supervisor.stop();
    }
  });

  it("a job blocked on its concurrency key runs once the finish that frees the slot commits", async () => {
    const firm = env.firm();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // One job, one slot: the first run waits for `release`, the second returns at once.
    const limited = firm.defineJob("limited", ({ wait }: { wait: boolean }) => (wait ? held : undefined), {
      concurrency: { key: "k", to: 1 },
    });
    const supervisor = await firm.start(sleepy);
    try {
      await settle();
      const firstId = await enqueued(limited.enqueue({ wait: true }));
      await waitFor(async () => (await firm.getJob(firstId))?.state === "claimed", 10_000, "the first job to start");
      const secondId = await enqueued(limited.enqueue({ wait: false }));
      expect((await firm.getJob(secondId))?.state).toBe("blocked");
      // Its claim found nothing more: the worker sleeps until woken.
      await settle();
      release();
      await waitFor(async () => (await firm.getJob(secondId))?.state === "finished", 10_000, "the blocked job to run");
    } finally {
      await supervisor.stop();
    }
  });
});
