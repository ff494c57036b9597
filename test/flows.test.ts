import { expect, it } from "vitest";
import { InvalidFlowError, InvalidDependencyError, type DependencyResult, type FlowNode } from "../src/index.js";
import type { JobPolicies } from "../src/definitions/job-policies.js";
import { dispatchAllDue } from "../src/roles/dispatcher.js";
import { MAX_DEPENDENCIES } from "../src/definitions/dependency-options.js";
import { appClients } from "./support/app-clients.js";
import { countRows, describeEachDatabase, enqueued } from "./support/harness.js";
import { countingInserts } from "./support/insert-counter.js";

describeEachDatabase("flows (firm.flow)", (env) => {
  it("writes a tree in which every parent runs after its children, once, and returns each node's id", async () => {
    const firm = env.firm();
    const order: string[] = [];
    const seen = new Map<string, DependencyResult[]>();
    for (const name of ["resize", "caption", "publish", "notify"])
      firm.defineJob(name, async (args: { tag: string }, context) => {
        order.push(args.tag);
        seen.set(args.tag, await context.dependencyResults());
        return { tag: args.tag };
      });
    const tree = await firm.flow({
      name: "notify",
      args: { tag: "notify" },
      children: [
        {
          name: "publish",
          args: { tag: "publish" },
          children: [
            { name: "resize", args: { tag: "a" } },
            { name: "resize", args: { tag: "b" }, options: { queue: "slow" } },
          ],
        },
        { name: "caption", args: { tag: "c" } },
      ],
    });
    const publish = tree.children[0]!;
    const [a, b] = publish.children;
    const c = tree.children[1]!;
    expect(tree.status).toBe("created");
    for (const node of [tree, publish, a!, b!, c]) expect(typeof node.id).toBe("number");
    expect(new Set([tree.id, publish.id, a!.id, b!.id, c.id]).size).toBe(5);
    expect(b!.args).toEqual({ tag: "b" });
    expect((await firm.getJob(tree.id!))?.state).toBe("pending");
    expect((await firm.getJob(publish.id!))?.state).toBe("pending");
    expect((await firm.getJob(a!.id!))?.state).toBe("ready");
    expect(await countRows(await env.db(), "firm_queue_job_dependencies")).toBe(4);
    await firm.drain({ queues: "default" });
    expect(order.sort()).toEqual(["a", "c"]);
    expect((await firm.getJob(publish.id!))?.state).toBe("pending");
    await firm.drain();
    expect(order.slice(2)).toEqual(["b", "publish", "notify"]);
    expect(seen.get("publish")).toEqual([
      { id: a!.id, name: "resize", state: "finished", result: { tag: "a" } },
      { id: b!.id, name: "resize", state: "finished", result: { tag: "b" } },
    ]);
    expect(seen.get("notify")!.map((dep) => dep.id)).toEqual([publish.id, c.id]);
  });

  it("a 3,000-child flow is one INSERT per table on PostgreSQL, with each child's row, edge and dispatch as for a small one", {
    timeout: 120_000,
  }, async () => {
    const firm = env.firm();
    for (const name of ["step", "parent"]) firm.defineJob(name, async () => {});
    firm.defineJob("limited", async () => {}, { concurrency: { key: () => "one", to: 1 } });
    const later = new Date(Date.now() + 3_600_000);
    // Children by place: 0 ready, 1 scheduled, 2 ready on another queue and priority, 3 limited
    // (the first takes the slot, the others are blocked).
    const children: FlowNode[] = [...Array(3_000).keys()].map((index) => {
      if (index % 4 === 1) return { name: "step", args: { index }, options: { at: later } };
      if (index % 4 === 2) return { name: "step", args: { index }, options: { queue: "other", priority: 5 } };
      if (index % 4 === 3) return { name: "limited", args: { index } };
      return { name: "step", args: { index } };
    });
    let tree: Awaited<ReturnType<typeof firm.flow>> | undefined;
    const inserts = await countingInserts(await firm.database(), async () => {
      tree = await firm.flow({ name: "parent", args: { root: true }, children });
    });
    if (env.dialect === "postgres") {
      expect(inserts).toMatchObject({
        firm_queue_jobs: 1,
        firm_queue_job_dependencies: 1,
        firm_queue_ready_executions: 1,
      });
    } else {
      expect(inserts).toMatchObject({ firm_queue_jobs: 4, firm_queue_job_dependencies: 6 });
    }
    const ids = tree!.children.map((child) => child.id!);
    expect(tree!.children.map((child) => child.status)).toEqual(children.map(() => "created"));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(tree!.id).toBeGreaterThan(ids[2_999]!);
    const db = await env.db();
    const jobs = await db
      .selectFrom("firm_queue_jobs")
      .select(["id", "arguments", "queue_name", "priority", "scheduled_at", "unmet_dependencies", "has_dependents"])
      .orderBy("id")
      .execute();
    expect(jobs.map((row) => Number(row.id))).toEqual([...ids, tree!.id]);
    jobs.slice(0, 3_000).forEach((row, index) => {
      expect(JSON.parse(row.arguments!)).toEqual({ index });
      expect([row.queue_name, row.priority, row.unmet_dependencies, row.has_dependents]).toEqual(
        index % 4 === 2 ? ["other", 5, 0, 1] : ["default", 0, 0, 1],
      );
      expect(new Date(row.scheduled_at!).getTime() >= later.getTime()).toBe(index % 4 === 1);
    });
    expect([JSON.parse(jobs[3_000]!.arguments!), jobs[3_000]!.unmet_dependencies, jobs[3_000]!.has_dependents]).toEqual(
      [{ root: true }, 3_000, 0],
    );
    const edges = await db
      .selectFrom("firm_queue_job_dependencies")
      .select(["job_id", "dependency_id", "position", "dependency_name", "dependency_state", "on_failure"])
      .orderBy("position")
      .execute();
    expect(
      edges.map((edge) => [Number(edge.job_id), Number(edge.dependency_id), edge.position, edge.dependency_name]),
    ).toEqual(ids.map((id, index) => [tree!.id, id, index, index % 4 === 3 ? "limited" : "step"]));
    expect(new Set(edges.map((edge) => `${edge.dependency_state}/${edge.on_failure}`))).toEqual(
      new Set(["null/cancel"]),
    );
    const jobIds = async (
      table: "firm_queue_ready_executions" | "firm_queue_scheduled_executions" | "firm_queue_blocked_executions",
    ) => (await db.selectFrom(table).select("job_id").orderBy("job_id").execute()).map((row) => Number(row.job_id));
    expect(await jobIds("firm_queue_ready_executions")).toEqual(
      ids.filter((_, index) => index % 4 === 0 || index % 4 === 2 || index === 3),
    );
    expect(await jobIds("firm_queue_scheduled_executions")).toEqual(ids.filter((_, index) => index % 4 === 1));
    expect(await jobIds("firm_queue_blocked_executions")).toEqual(
      ids.filter((_, index) => index % 4 === 3 && index > 3),
    );
    const ready = await db
      .selectFrom("firm_queue_ready_executions")
      .select(["job_id", "queue_name", "priority"])
      .execute();
    const byId = new Map(ids.map((id, index) => [id, index]));
    for (const row of ready)
      expect([row.queue_name, row.priority]).toEqual(
        byId.get(Number(row.job_id))! % 4 === 2 ? ["other", 5] : ["default", 0],
      );
  });

  it("a node's dependsOn comes before its children in dependencyResults; one node under two parents is one job", async () => {
    const firm = env.firm();
    const seen = new Map<string, number[]>();
    const runs: string[] = [];
    firm.defineJob("step", async (args: { tag: string }, context) => {
      runs.push(args.tag);
      seen.set(
        args.tag,
        (await context.dependencyResults()).map((dep) => dep.id),
      );
    });
    const earlier = await enqueued(firm.enqueue("step", { tag: "earlier" }));
    const shared: FlowNode = { name: "step", args: { tag: "shared" } };
    const tree = await firm.flow({
      name: "step",
      args: { tag: "root" },
      options: { dependsOn: [earlier] },
      children: [
        { name: "step", args: { tag: "left" }, children: [shared] },
        { name: "step", args: { tag: "right" }, children: [shared] },
      ],
    });
    const [left, right] = tree.children;
    expect(left!.children[0]!.id).toBe(right!.children[0]!.id);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(5);
    await firm.drain();
    expect(runs.filter((tag) => tag === "shared")).toHaveLength(1);
    expect(runs.at(-1)).toBe("root");
    expect(seen.get("root")).toEqual([earlier, left!.id, right!.id]);
  });

  it("a child that fails for good cancels its parents (or not, with onDependencyFailure run)", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    firm.defineJob(
      "broken",
      async () => {
        throw new Error("no");
      },
      { retry: { attempts: 1 } },
    );
    firm.defineJob("step", async (args: { tag: string }) => void ran.push(args.tag));
    const cancelled = await firm.flow({
      name: "step",
      args: { tag: "top" },
      children: [{ name: "step", args: { tag: "middle" }, children: [{ name: "broken", args: null }] }],
    });
    const runs = await firm.flow({
      name: "step",
      args: { tag: "anyway" },
      options: { onDependencyFailure: "run" },
      children: [{ name: "broken", args: null }],
    });
    await firm.drain();
    expect((await firm.getJob(cancelled.id!))?.state).toBe("cancelled");
    expect((await firm.getJob(cancelled.children[0]!.id!))?.state).toBe("cancelled");
    expect(ran).toEqual(["anyway"]);
    expect((await firm.getJob(runs.id!))?.state).toBe("finished");
  });

  it("a flow is all or nothing: bad nodes are InvalidFlowError naming the place, nothing is written", async () => {
    const firm = env.firm();
    firm.defineJob("step", async () => {});
    firm.defineJob("once", async () => {}, { unique: { key: () => "k" } });
    const db = await env.db();
    const loop: { name: string; args: null; children: unknown[] } = { name: "step", args: null, children: [] };
    loop.children.push({ name: "step", args: null, children: [loop] });
    const bad: Array<[unknown, RegExp]> = [
      [null, /^flow must be an object/],
      [{ args: null }, /^flow\.name is missing/],
      [{ name: "step", children: {} }, /^flow\.children must be a list/],
      [{ name: "step", children: [{ name: "nope", args: null }] }, /^flow\.children\[0\]\.name names "nope"/],
      [{ name: "step", children: [{ name: "step", kids: [] }] }, /^flow\.children\[0\] has an unknown key "kids"/],
      [{ name: "step", children: [{ name: "step", options: { key: "x" } }] }, /options\.key is not supported/],
      [{ name: "step", children: [{ name: "once", args: null }] }, /a job with a unique key/],
      [{ name: "step", options: { transaction: {} } }, /^flow\.options\.transaction is not a node's option/],
      [loop, /^flow\.children\[0\]\.children\[0\] is one of its own ancestors/],
      [{ name: "", args: null }, /^flow\.name A job name must be/],
    ];
    for (const [tree, message] of bad) {
      const attempt = firm.flow(tree as FlowNode);
      await expect(attempt).rejects.toThrow(InvalidFlowError);
      await expect(firm.flow(tree as FlowNode)).rejects.toThrow(message);
    }
    // Checked later, by the enqueue itself: still nothing of the flow is written.
    await expect(
      firm.flow({ name: "step", children: [{ name: "step", options: { dependsOn: "1" as never } }] }),
    ).rejects.toThrow(InvalidDependencyError);
    await expect(
      firm.flow({ name: "step", options: { dependsOn: [999_999] }, children: [{ name: "step" }] }),
    ).rejects.toThrow("Job 999999");
    expect(await countRows(db, "firm_queue_jobs")).toBe(0);
    expect(await countRows(db, "firm_queue_job_dependencies")).toBe(0);
  });

  it("a node with more than MAX_DEPENDENCIES dependencies, its dependsOn and its children together, is refused whole", async () => {
    const firm = env.firm();
    firm.defineJob("step", async () => {});
    const db = await env.db();
    // Ids need not exist: the count is checked before anything is read or written.
    const ids = (count: number) => Array.from({ length: count }, (_, index) => index + 1);
    const tooMany: FlowNode[] = [
      { name: "step", options: { dependsOn: ids(MAX_DEPENDENCIES) }, children: [{ name: "step" }] },
      { name: "step", children: [{ name: "step", options: { dependsOn: ids(MAX_DEPENDENCIES + 1) } }] },
      { name: "step", children: ids(MAX_DEPENDENCIES + 1).map((n) => ({ name: "step", args: n })) },
    ];
    for (const tree of tooMany) {
      const attempt = firm.flow(tree);
      await expect(attempt).rejects.toThrow(InvalidDependencyError);
      await expect(attempt).rejects.toThrow(`at most ${MAX_DEPENDENCIES}`);
    }
    expect(await countRows(db, "firm_queue_jobs")).toBe(0);
    expect(await countRows(db, "firm_queue_job_dependencies")).toBe(0);
  });

  it("a child dropped by its concurrency limit cancels its parent at once instead of leaving it pending", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    firm.defineJob("single", async () => void ran.push("single"), {
      concurrency: { key: () => "one", to: 1, onConflict: "discard" },
    });
    firm.defineJob("step", async (args: { tag: string }) => void ran.push(args.tag));
    const tree = await firm.flow({
      name: "step",
      args: { tag: "parent" },
      children: [
        { name: "single", args: null },
        { name: "single", args: null },
      ],
    });
    const anyway = await firm.flow({
      name: "step",
      args: { tag: "anyway" },
      options: { onDependencyFailure: "run" },
      children: [{ name: "single", args: null }],
    });
    expect(tree.children.map((child) => child.status)).toEqual(["created", "dropped"]);
    expect(anyway.children[0]!.status).toBe("dropped");
    expect((await firm.getJob(tree.id!))?.state).toBe("cancelled");
    expect((await firm.getJob(anyway.id!))?.state).toBe("ready");
    await firm.drain();
    expect(ran.sort()).toEqual(["anyway", "single"]);
  });

  it("a released or scheduled dependent dropped by its concurrency limit cascades to its own dependents", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    const holder = firm.defineJob("holder", async () => void ran.push("holder"), {
      concurrency: { key: () => "one", to: 1, onConflict: "discard" },
    });
    firm.defineJob("step", async (args: { tag: string }) => void ran.push(args.tag));
    // The key's one slot is held by a ready job in a queue not drained here.
    await enqueued(holder.enqueue(null, { queue: "other" }));
    const released = await firm.flow({
      name: "step",
      args: { tag: "top" },
      children: [{ name: "holder", args: null, children: [{ name: "step", args: { tag: "leaf" } }] }],
    });
    const scheduled = await firm.flow({
      name: "step",
      args: { tag: "after-scheduled" },
      children: [{ name: "holder", args: null, options: { wait: "1h" } }],
    });
    await firm.drain({ queues: "default" });
    expect(ran).toEqual(["leaf"]);
    expect((await firm.getJob(released.id!))?.state).toBe("cancelled");
    expect((await firm.getJob(scheduled.id!))?.state).toBe("pending");
    await (await env.db())
      .updateTable("firm_queue_scheduled_executions")
      .set({ scheduled_at: new Date(Date.now() - 1000) })
      .execute();
    const policies = (firm as unknown as { policies: JobPolicies }).policies;
    await dispatchAllDue(await firm.database(), policies, 100);
    expect(await firm.getJob(scheduled.children[0]!.id!)).toBeNull();
    expect((await firm.getJob(scheduled.id!))?.state).toBe("cancelled");
  });

  for (const { name, open } of appClients(env.dialect, () => env.url)) {
    it(`${name}: a flow in the app's transaction exists if and only if it commits`, async () => {
      const firm = env.firm();
      firm.defineJob("step", async () => {});
      const tree = {
        name: "step",
        args: null,
        children: [
          { name: "step", args: null },
          { name: "step", args: null },
        ],
      };
      const app = open();
      try {
        await app.transaction(async (transaction) => void (await firm.flow(tree, { transaction })), { rollback: true });
        const db = await env.db();
        expect(await countRows(db, "firm_queue_jobs")).toBe(0);
        let root = 0;
        await app.transaction(async (transaction) => void (root = (await firm.flow(tree, { transaction })).id!), {
          rollback: false,
        });
        expect(await countRows(db, "firm_queue_jobs")).toBe(3);
        expect(await countRows(db, "firm_queue_job_dependencies")).toBe(2);
        expect(await firm.drain()).toBe(3);
        expect((await firm.getJob(root))?.state).toBe("finished");
      } finally {
        await app.close();
      }
    });
  }
});
