import { expect, it } from "vitest";
import type { FirmQueue } from "../src/index.js";
import { describeEachDatabaseAtOnce, enqueued, waitFor } from "./support/harness.js";
import { installFault, jobInQueue } from "./support/faults.js";

describeEachDatabaseAtOnce("faults while claiming", (env) => {
  /**
   * A worker on `queues`, polling every `pollingInterval` ms, whose claims of jobs in
   * `failingQueue` fail while `fault` is on (it starts on). `beforeStart` enqueues what must be
   * there at the worker's first poll. `body` gets the run log (each job records its argument), the
   * count of errors reported, and `strayClaim(queue)`, which leaves what a claim the worker never
   * heard of leaves: a claim of its process for a new job of `queue` that it does not run.
   */
  async function withFailingClaims<T>(
    setup: {
      failingQueue: string;
      queues: string | string[];
      pollingInterval: number;
      beforeStart?: (firm: FirmQueue) => Promise<T>;
    },
    body: (context: {
      firm: FirmQueue;
      fault: { off(): Promise<void> };
      ran: string[];
      errors: () => number;
      enqueuedBefore: T | undefined;
      strayClaim: (queue: string) => Promise<number>;
    }) => Promise<void>,
  ): Promise<void> {
    const db = await env.db();
    const fault = await installFault(db, env.dialect, {
      table: "firm_queue_claimed_executions",
      event: "INSERT",
      when: jobInQueue("NEW", setup.failingQueue),
    });
    try {
      await fault.on();
      const firm = env.firm();
      const ran: string[] = [];
      firm.defineJob("record", async (what: string) => void ran.push(what));
      const enqueuedBefore = await setup.beforeStart?.(firm);
      let errors = 0;
      firm.addHooks({ onError: () => void errors++ });
      const supervisor = await firm.start({
        workers: [{ queues: setup.queues, pollingInterval: setup.pollingInterval }],
        dispatchers: [],
      });
      try {
        const worker = Number(
          (
            await db
              .selectFrom("firm_queue_processes")
              .select("id")
              .where("kind", "=", "Worker")
              .executeTakeFirstOrThrow()
          ).id,
        );
        const strayClaim = async (queue: string) => {
          const id = await enqueued(firm.enqueue("record", `stray in ${queue}`, { queue, wait: "1h" }));
          await db.deleteFrom("firm_queue_scheduled_executions").where("job_id", "=", id).execute();
          await db
            .insertInto("firm_queue_claimed_executions")
            .values({ job_id: id, process_id: worker, created_at: new Date() })
            .execute();
          return id;
        };
        await body({ firm, fault, ran, errors: () => errors, enqueuedBefore, strayClaim });
      } finally {
        await supervisor.stop();
      }
    } finally {
      await fault.remove();
    }
  }

  const finished =
    (firm: FirmQueue, ...ids: number[]) =>
    async () =>
      (await Promise.all(ids.map((id) => firm.getJob(id)))).every((job) => job?.state === "finished");

  /** One job in each of q1 and q2 before the worker starts, so its first poll claims q1's and fails on q2. */
  const oneJobInEachQueue = async (firm: FirmQueue) => [
    await enqueued(firm.enqueue("record", "q1", { queue: "q1" })),
    await enqueued(firm.enqueue("record", "q2", { queue: "q2" })),
  ];

  it("a claim that fails on a later queue does not strand what the earlier queues claimed", async () => {
    await withFailingClaims(
      { failingQueue: "q2", queues: ["q1", "q2"], pollingInterval: 50, beforeStart: oneJobInEachQueue },
      async ({ firm, fault, ran, errors, enqueuedBefore }) => {
        await waitFor(() => errors() > 0, 10_000, "the claim on q2 to fail");
        await fault.off();
        await waitFor(finished(firm, ...enqueuedBefore!), 10_000, "both jobs to finish");
        expect(ran.sort()).toEqual(["q1", "q2"]);
      },
    );
  });

  it("a claim that fails on a later queue after an earlier queue's claim worked is looked for too, in case it committed", async () => {
    // Polls 2 s apart, so that the fault is off before the next regular poll, which then works:
    // only a look for claims the worker does not know of, due since the failure, finds the one
    // left below.
    await withFailingClaims(
      { failingQueue: "q2", queues: ["q1", "q2"], pollingInterval: 2000, beforeStart: oneJobInEachQueue },
      async ({ firm, fault, ran, errors, enqueuedBefore, strayClaim }) => {
        await waitFor(() => errors() > 0, 10_000, "the claim on q2 to fail");
        await waitFor(finished(firm, enqueuedBefore![0]!), 10_000, "q1's job to finish");
        // What the failed claim on q2 leaves if it committed after all (in q1 here, which the
        // worker may run once that claim is given back).
        const stray = await strayClaim("q1");
        await fault.off();
        await waitFor(finished(firm, stray), 10_000, "the stray claim's job to finish");
        expect(ran).toContain("stray in q1");
      },
    );
  });

  it("a worker whose row was pruned while it lives claims nothing more, and is replaced by a registered one", async () => {
    const firm = env.firm();
    const ran: number[] = [];
    firm.defineJob("note", async (n: number) => void ran.push(n));
    // Heartbeats far apart: only the claim itself can notice that the row is gone.
    const supervisor = await firm.start({
      workers: [{ queues: "*", pollingInterval: 50 }],
      dispatchers: [],
      processHeartbeatInterval: 60_000,
      processAliveThreshold: 120_000,
    });
    try {
      const db = await env.db();
      const workers = async () =>
        (await db.selectFrom("firm_queue_processes").select("id").where("kind", "=", "Worker").execute()).map((row) =>
          Number(row.id),
        );
      const [original] = await workers();
      // Let the heartbeat's first beat (it beats once at start) pass: the next one is a minute away.
      await new Promise((resolve) => setTimeout(resolve, 500));
      // What a supervisor that thought it dead would do: delete its row.
      await db.deleteFrom("firm_queue_processes").where("id", "=", original!).execute();
      const id = await enqueued(firm.enqueue("note", 1));
      await waitFor(async () => (await firm.getJob(id))?.state === "finished", 10_000, "the job to finish");
      expect(ran).toEqual([1]);
      const now = await workers();
      expect(now).toHaveLength(1);
      expect(now[0]).not.toBe(original);
    } finally {
      await supervisor.stop();
    }
  });

  it("after a failed poll, a claim the worker holds without knowing (its answer was lost) goes back in line and runs", async () => {
    await withFailingClaims(
      { failingQueue: "a", queues: "*", pollingInterval: 50 },
      async ({ firm, fault, ran, errors, strayClaim }) => {
        // What a claim whose COMMIT landed but whose answer was lost leaves behind (the poll saw
        // only an error).
        const lost = await strayClaim("b");
        // Then its poll fails.
        const first = await enqueued(firm.enqueue("record", "a", { queue: "a" }));
        await waitFor(() => errors() > 0, 10_000, "a failed poll");
        await fault.off();
        await waitFor(finished(firm, first, lost), 10_000, "both jobs to finish");
        expect(ran.sort()).toEqual(["a", "stray in b"]);
      },
    );
  });

  it("a claim the worker gave up on that commits later, after its polls work again, still goes back in line and runs", async () => {
    await withFailingClaims(
      { failingQueue: "a", queues: "*", pollingInterval: 50 },
      async ({ firm, fault, ran, errors, strayClaim }) => {
        // The poll fails, then works again: the worker has looked for claims it does not know
        // and found none, and has run the job it could not claim before.
        const first = await enqueued(firm.enqueue("record", "a", { queue: "a" }));
        await waitFor(() => errors() > 0, 10_000, "a failed poll");
        await fault.off();
        await waitFor(finished(firm, first), 10_000, "the first job to finish");
        // Only now does a claim statement the worker gave up on commit on the server (a dropped
        // connection's claim that was waiting for a lock).
        const late = await strayClaim("b");
        await waitFor(finished(firm, late), 10_000, "the late-claimed job to finish");
        expect(ran.sort()).toEqual(["a", "stray in b"]);
      },
    );
  });
});
