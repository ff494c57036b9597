import { expect, it } from "vitest";
import { describeEachDatabaseAtOnce, waitFor } from "./support/harness.js";

/** Workers poll slowly here (a minute) so that only a wake-up can make the jobs run in time. */
const SLOW_POLL = 60_000;

describeEachDatabaseAtOnce("waking workers when jobs arrive", (env) => {
  it("an idle worker starts a job this process enqueues at once, not at its next poll", async () => {
    const firm = env.firm();
    const ran: number[] = [];
    const job = firm.defineJob("wake", async (args: { n: number }) => void ran.push(args.n));
    const supervisor = await firm.start({
      workers: [{ pollingInterval: SLOW_POLL }],
      dispatchers: [{ pollingInterval: SLOW_POLL }],
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300)); // the worker's first poll found nothing
      await job.enqueue({ n: 1 });
      await waitFor(() => ran.length === 1, 10_000, "the job to run");
      await job.enqueueAll([{ n: 2 }, { n: 3 }]);
      await waitFor(() => ran.length === 3, 10_000, "the bulk jobs to run");
    } finally {
      await supervisor.stop();
    }
  });

  it("a scheduled job the dispatcher promotes wakes the worker", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    const job = firm.defineJob("later", async () => void ran.push("later"));
    await job.enqueue(null, { wait: "400ms" });
    const supervisor = await firm.start({
      workers: [{ pollingInterval: SLOW_POLL }],
      dispatchers: [{ pollingInterval: 100 }],
    });
    try {
      await waitFor(() => ran.length === 1, 10_000, "the scheduled job to run");
    } finally {
      await supervisor.stop();
    }
  });

  it("jobs another process enqueues wake workers at once on PostgreSQL (LISTEN/NOTIFY), at the next poll elsewhere", async () => {
    const worker = env.firm();
    const ran: number[] = [];
    worker.defineJob("remote", async (_args, context) => void ran.push(context.jobId));
    // Only PostgreSQL can announce a commit to other processes; the others are polled, quickly here.
    const pollingInterval = env.dialect === "postgres" ? SLOW_POLL : 200;
    const supervisor = await worker.start({ workers: [{ pollingInterval }], dispatchers: [] });
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Another FirmQueue: its own pool and its own in-process signal, like another process.
      const producer = env.firm();
      const id = (await producer.enqueue("remote", null, { undeclared: true })).id;
      await waitFor(() => ran.includes(id!), 10_000, "the other process's job to run");
      expect(ran).toEqual([id]);
    } finally {
      await supervisor.stop();
    }
  });
});
