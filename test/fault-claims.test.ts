import { expect, it } from "vitest";
import type { FirmQueue } from "../src/index.js";
import { describeEachDatabase, enqueued, waitFor } from "./support/harness.js";
import { installFault, jobInQueue } from "./support/faults.js";

describeEachDatabase("faults while claiming", (env) => {
  it("a claim that fails on a later queue does not strand what the earlier queues claimed", async () => {
    const db = await env.db();
    const fault = await installFault(db, env.dialect, {
      table: "firm_queue_claimed_executions",
      event: "INSERT",
      when: jobInQueue("NEW", "q2"),
    });
    try {
      await fault.on();
      const firm = env.firm();
      const ran: string[] = [];
      firm.defineJob("record", async (queue: string) => void ran.push(queue));
      const first = await enqueued(firm.enqueue("record", "q1", { queue: "q1" }));
      const second = await enqueued(firm.enqueue("record", "q2", { queue: "q2" }));
      let errors = 0;
      firm.addHooks({ onError: () => void errors++ });
      const supervisor = await firm.start({
        workers: [{ queues: ["q1", "q2"], pollingInterval: 50 }],
        dispatchers: [],
      });
      try {
        await waitFor(() => errors > 0, 10_000, "the claim on q2 to fail");
        await fault.off();
        await waitFor(
          async () =>
            (await firm.getJob(first))?.state === "finished" && (await firm.getJob(second))?.state === "finished",
          10_000,
          "both jobs to finish",
        );
        expect(ran.sort()).toEqual(["q1", "q2"]);
      } finally {
        await supervisor.stop();
      }
    } finally {
      await fault.remove();
    }
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

  /**
   * A worker polling every 50 ms whose claims of jobs in queue "a" fail while `fault` is on (it
   * starts on). `body` gets the run log, the count of errors reported, and `strayClaim()`, which
   * leaves what a claim the worker never heard of leaves: a claim of its process for a new job of
   * queue "b" that it does not run.
   */
  async function withFailingClaims(
    body: (setup: {
      firm: FirmQueue;
      fault: { off(): Promise<void> };
      ran: string[];
      errors: () => number;
      strayClaim: () => Promise<number>;
    }) => Promise<void>,
  ): Promise<void> {
    const db = await env.db();
    const fault = await installFault(db, env.dialect, {
      table: "firm_queue_claimed_executions",
      event: "INSERT",
      when: jobInQueue("NEW", "a"),
    });
    try {
      await fault.on();
      const firm = env.firm();
      const ran: string[] = [];
      firm.defineJob("record", async (queue: string) => void ran.push(queue));
      let errors = 0;
      firm.addHooks({ onError: () => void errors++ });
      const supervisor = await firm.start({ workers: [{ queues: "*", pollingInterval: 50 }], dispatchers: [] });
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
        const strayClaim = async () => {
          const id = await enqueued(firm.enqueue("record", "b", { queue: "b", wait: "1h" }));
          await db.deleteFrom("firm_queue_scheduled_executions").where("job_id", "=", id).execute();
          await db
            .insertInto("firm_queue_claimed_executions")
            .values({ job_id: id, process_id: worker, created_at: new Date() })
            .execute();
          return id;
        };
        await body({ firm, fault, ran, errors: () => errors, strayClaim });
      } finally {
        await supervisor.stop();
      }
    } finally {
      await fault.remove();
    }
  }

  it("after a failed poll, a claim the worker holds without knowing (its answer was lost) goes back in line and runs", async () => {
    await withFailingClaims(async ({ firm, fault, ran, errors, strayClaim }) => {
      // What a claim whose COMMIT landed but whose answer was lost leaves behind (the poll saw
      // only an error).
      const lost = await strayClaim();
      // Then its poll fails.
      const first = await enqueued(firm.enqueue("record", "a", { queue: "a" }));
      await waitFor(() => errors() > 0, 10_000, "a failed poll");
      await fault.off();
      await waitFor(
        async () => (await firm.getJob(first))?.state === "finished" && (await firm.getJob(lost))?.state === "finished",
        10_000,
        "both jobs to finish",
      );
      expect(ran.sort()).toEqual(["a", "b"]);
    });
  });

  it("a claim the worker gave up on that commits later, after its polls work again, still goes back in line and runs", async () => {
    await withFailingClaims(async ({ firm, fault, ran, errors, strayClaim }) => {
      // The poll fails, then works again: the worker has looked for claims it does not know
      // and found none, and has run the job it could not claim before.
      const first = await enqueued(firm.enqueue("record", "a", { queue: "a" }));
      await waitFor(() => errors() > 0, 10_000, "a failed poll");
      await fault.off();
      await waitFor(async () => (await firm.getJob(first))?.state === "finished", 10_000, "the first job to finish");
      // Only now does a claim statement the worker gave up on commit on the server (a dropped
      // connection's claim that was waiting for a lock).
      const late = await strayClaim();
      await waitFor(
        async () => (await firm.getJob(late))?.state === "finished",
        10_000,
        "the late-claimed job to finish",
      );
      expect(ran.sort()).toEqual(["a", "b"]);
    });
  });
});
