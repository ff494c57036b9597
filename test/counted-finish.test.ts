import { expect, it } from "vitest";
import { countRows, describeEachDatabase } from "./support/harness.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { registerProcess } from "../src/models/process.js";
import { finishClaimedJobs } from "../src/lifecycle/claimed-jobs.js";
import { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRegistry } from "../src/definitions/job-registry.js";
import { silentLogger } from "../src/index.js";
import type { Database } from "../src/database/connection.js";
import type { ClaimedJob } from "../src/database/claimed-job.js";

/*
 * The finish of jobs that have dependents or belong to a batch (`finishCounted`: one statement,
 * or one short transaction): it lowers the counts as long as none reaches 0, and leaves the finish
 * that brings one to 0 to the portable transaction, which dispatches the dependent or ends the
 * batch. These fail if the counting finish records a job whose end should have released or ended
 * something, or records one whose claim was lost. The race below runs on every database.
 */
describeEachDatabase("finish of jobs with dependents or a batch", (env) => {
  const policies = new JobPolicies(new JobRegistry(), silentLogger);

  function counted(database: Database, processId: number, jobs: readonly ClaimedJob[]): Promise<number[]> {
    return database.dialect.finishCounted!(database.db, {
      jobIds: jobs.map((job) => Number(job.id)),
      startedIds: [],
      processId,
      now: new Date(),
      preserve: true,
      batchJobIds: jobs.filter((job) => job.batch_id !== null).map((job) => Number(job.id)),
      batchIds: [...new Set(jobs.filter((job) => job.batch_id !== null).map((job) => Number(job.batch_id)))],
    });
  }

  /** A flow of a parent over three children, the children claimed by a new worker process. */
  async function claimedFlow() {
    const firm = env.firm();
    firm.defineJob("child", async () => {}, { queue: "children" });
    firm.defineJob("parent", async () => {}, { queue: "parents" });
    const flow = await firm.flow({
      name: "parent",
      args: null,
      children: [1, 2, 3].map((n) => ({ name: "child", args: { n } })),
    });
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "flow" }, new Date());
    const children = await claimJobs(database, new QueueSelector(["children"]), 10, processId);
    return { firm, flow, database, processId, children };
  }

  it("lowers a parent's count while children remain, and leaves the last child's finish to the transaction", async () => {
    const { firm, flow, database, processId, children } = await claimedFlow();
    expect(database.dialect.finishCounted).toBeDefined();
    expect(children.map((job) => Number(job.has_dependents))).toEqual([1, 1, 1]);
    const db = await env.db();
    const parent = () =>
      db.selectFrom("firm_queue_jobs").selectAll().where("id", "=", flow.id!).executeTakeFirstOrThrow();
    const openEdges = async () =>
      (
        await db
          .selectFrom("firm_queue_job_dependencies")
          .select("dependency_id")
          .where("job_id", "=", flow.id!)
          .where("dependency_state", "is", null)
          .execute()
      ).map((row) => Number(row.dependency_id));

    expect(await counted(database, processId, children.slice(0, 2))).toEqual(
      children.slice(0, 2).map((job) => Number(job.id)),
    );
    expect((await parent()).unmet_dependencies).toBe(1);
    expect(await openEdges()).toEqual([Number(children[2]!.id)]);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(1);

    // The last child would bring the count to 0: nothing is recorded, its claim stays.
    expect(await counted(database, processId, children.slice(2))).toEqual([]);
    expect((await parent()).unmet_dependencies).toBe(1);
    expect(await openEdges()).toEqual([Number(children[2]!.id)]);
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(1);
    expect((await firm.getJob(Number(children[2]!.id)))?.state).toBe("claimed");

    // The worker's finish takes it through the transaction: the parent is released, once.
    const recorded = await finishClaimedJobs(database, policies, processId, children.slice(2), true);
    expect([...recorded]).toEqual([Number(children[2]!.id)]);
    expect((await parent()).unmet_dependencies).toBe(0);
    expect((await firm.getJob(flow.id!))?.state).toBe("ready");
    expect(await countRows(db, "firm_queue_ready_executions")).toBe(1);
  });

  it("counts a batch's jobs while others remain, and leaves its last job's finish to the transaction", async () => {
    const firm = env.firm();
    firm.defineJob("member", async () => {}, { queue: "members" });
    firm.defineJob("done", async () => {}, { queue: "callbacks" });
    const batch = await firm.batch(
      [1, 2, 3].map((n) => ({ name: "member", args: { n } })),
      { onFinish: { name: "done", args: null } },
    );
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "batch" }, new Date());
    const members = await claimJobs(database, new QueueSelector(["members"]), 10, processId);
    const db = await env.db();
    const row = () =>
      db.selectFrom("firm_queue_batches").selectAll().where("id", "=", batch.id).executeTakeFirstOrThrow();

    expect(await counted(database, processId, members.slice(0, 2))).toEqual(
      members.slice(0, 2).map((job) => Number(job.id)),
    );
    expect(await row()).toMatchObject({ state: "pending", pending: 1, finished: 2 });
    const open = await db.selectFrom("firm_queue_batch_jobs").select("job_id").where("state", "is", null).execute();
    expect(open.map((member) => Number(member.job_id))).toEqual([Number(members[2]!.id)]);

    expect(await counted(database, processId, members.slice(2))).toEqual([]);
    expect(await row()).toMatchObject({ state: "pending", pending: 1, finished: 2 });
    expect(await countRows(db, "firm_queue_claimed_executions")).toBe(1);

    await finishClaimedJobs(database, policies, processId, members.slice(2), true);
    expect(await row()).toMatchObject({ state: "finished", pending: 0, finished: 3 });
    const callbacks = await db.selectFrom("firm_queue_jobs").select("id").where("class_name", "=", "done").execute();
    expect(callbacks).toHaveLength(1);
  });

  it("never records a job whose claim is gone, nor counts its end", async () => {
    const { flow, database, processId, children } = await claimedFlow();
    const db = await env.db();
    // The second child's claim was taken away (its process was found dead, say).
    const lost = Number(children[1]!.id);
    await db.deleteFrom("firm_queue_claimed_executions").where("job_id", "=", lost).execute();

    const recorded = await counted(database, processId, children.slice(0, 2));
    // A database may record the jobs still held, or none of them; never the one whose claim is gone.
    expect(recorded).not.toContain(lost);
    const lostRow = await db.selectFrom("firm_queue_jobs").selectAll().where("id", "=", lost).executeTakeFirstOrThrow();
    expect(lostRow.finished_at).toBeNull();
    const edges = await db
      .selectFrom("firm_queue_job_dependencies")
      .select(["dependency_id", "dependency_state"])
      .where("job_id", "=", flow.id!)
      .orderBy("dependency_id")
      .execute();
    expect(edges.filter((edge) => edge.dependency_state !== null).map((edge) => Number(edge.dependency_id))).toEqual(
      recorded,
    );
    const parent = await db
      .selectFrom("firm_queue_jobs")
      .selectAll()
      .where("id", "=", flow.id!)
      .executeTakeFirstOrThrow();
    expect(parent.unmet_dependencies).toBe(3 - recorded.length);
  });

  it("counts a dependent added to a batch's job while it ran", async () => {
    const firm = env.firm();
    firm.defineJob("member", async () => {}, { queue: "members" });
    firm.defineJob("later", async () => {}, { queue: "later" });
    firm.defineJob("done", async () => {}, { queue: "callbacks" });
    await firm.batch(
      [1, 2, 3].map((n) => ({ name: "member", args: { n } })),
      { onFinish: { name: "done", args: null } },
    );
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "batch" }, new Date());
    const members = await claimJobs(database, new QueueSelector(["members"]), 10, processId);
    // Two jobs wait for the first two members, enqueued after those were claimed.
    const [first, second] = members.map((job) => Number(job.id));
    const later = await firm.enqueue("later", null, { dependsOn: [first!, second!] });

    expect(await counted(database, processId, members.slice(0, 1))).toEqual([first]);
    const db = await env.db();
    const row = await db
      .selectFrom("firm_queue_jobs")
      .selectAll()
      .where("id", "=", later.id!)
      .executeTakeFirstOrThrow();
    expect(row.unmet_dependencies).toBe(1);
    // The second member would release it: left to the transaction, which does.
    expect(await counted(database, processId, members.slice(1, 2))).toEqual([]);
    await finishClaimedJobs(database, policies, processId, members.slice(1, 2), true);
    expect((await firm.getJob(later.id!))?.state).toBe("ready");
  });
});

/** The worker's finish, whichever path each database takes, under a race of the last two ends. */
describeEachDatabase("finish of the last two dependencies at once", (env) => {
  const policies = new JobPolicies(new JobRegistry(), silentLogger);

  /** A new worker process claims every job of `queue`; the finish of them all, through the worker's path, to call. */
  async function claimAll(database: Database, queue: string): Promise<() => Promise<Set<number>>> {
    const processId = await registerProcess(database.db, { kind: "Worker", name: queue }, new Date());
    const jobs = await claimJobs(database, new QueueSelector([queue]), 100, processId);
    return () => finishClaimedJobs(database, policies, processId, jobs, true);
  }

  it("two finishes of the last two dependencies of 20 jobs at once, 10 times: each dependent is released once", {
    timeout: 120_000,
  }, async () => {
    const firm = env.firm();
    const dependency = firm.defineJob("dependency", async () => {});
    const dependent = firm.defineJob("dependent", async () => {}, { queue: "dependents" });
    const database = await firm.database();
    const db = await env.db();
    for (let round = 0; round < 10; round++) {
      const args = [...Array(20).keys()].map((n) => ({ n }));
      const as = (await dependency.enqueueAll(args, { queue: `a${round}` })).map((result) => result.id!);
      const bs = (await dependency.enqueueAll(args, { queue: `b${round}` })).map((result) => result.id!);
      const dependents = (
        await dependent.enqueueAll(
          args.map(() => null),
          { each: as.map((a, i) => ({ dependsOn: [a, bs[i]!] })) },
        )
      ).map((result) => result.id!);
      const finishes = await Promise.all([claimAll(database, `a${round}`), claimAll(database, `b${round}`)]);
      const recorded = await Promise.all(finishes.map((finish) => finish()));
      expect(recorded.reduce((sum, ids) => sum + ids.size, 0)).toBe(40);
      const ready = await db
        .selectFrom("firm_queue_ready_executions")
        .select("job_id")
        .where("job_id", "in", dependents)
        .execute();
      expect(ready.map((row) => Number(row.job_id)).sort((x, y) => x - y)).toEqual(dependents);
      const counts = await db
        .selectFrom("firm_queue_jobs")
        .select("unmet_dependencies")
        .where("id", "in", dependents)
        .execute();
      expect(counts.every((job) => job.unmet_dependencies === 0)).toBe(true);
      await db.deleteFrom("firm_queue_ready_executions").where("job_id", "in", dependents).execute();
    }
  });
});
