import { describe, expectTypeOf, it } from "vitest";
import {
  FirmQueue,
  type FlowNode,
  type JobArguments,
  type JobInfo,
  type JobInfoOf,
  type JobBudgetWait,
  type StoredError,
} from "../src/index.js";
import { createTestQueue } from "../src/testing/index.js";

// Type-only: checked by vitest's typecheck (see vitest.config.ts), never run.
type AppJobs = {
  resize: { photo: string; width?: number };
  "send-email": { to: string };
};
const firm = new FirmQueue<AppJobs>({ databaseUrl: "sqlite::memory:" });
const loose = new FirmQueue({ databaseUrl: "sqlite::memory:" });

describe("enqueue by name with a map of the jobs", () => {
  it("checks the name and the arguments", () => {
    void firm.enqueue("resize", { photo: "a.jpg" });
    void firm.enqueue("resize", { photo: "a.jpg", width: 200 }, { queue: "images" });
    void firm.enqueue("send-email", { to: "a@example.com" });
    // @ts-expect-error a misspelt name
    void firm.enqueue("resise", { photo: "a.jpg" });
    // @ts-expect-error a missing field
    void firm.enqueue("resize", {});
    // @ts-expect-error a field of the wrong type
    void firm.enqueue("resize", { photo: 1 });
    // @ts-expect-error another job's arguments
    void firm.enqueue("send-email", { photo: "a.jpg" });
    // @ts-expect-error a field the job does not have
    void firm.enqueue("resize", { photo: "a.jpg", height: 1 });
  });

  it("types flow nodes by name", () => {
    void firm.flow({
      name: "send-email",
      args: { to: "a@example.com" },
      children: [{ name: "resize", args: { photo: "a.jpg" } }],
    });
    // @ts-expect-error a misspelt name in a child
    void firm.flow({ name: "send-email", args: { to: "a" }, children: [{ name: "resise", args: { photo: "a" } }] });
    // @ts-expect-error arguments of another job
    void firm.flow({ name: "resize", args: { to: "a" } });
    // @ts-expect-error with a map, a node's arguments are required
    void firm.flow({ name: "resize" });
  });

  it("types batch jobs and callbacks by name", () => {
    void firm.batch([{ name: "resize", args: { photo: "a.jpg" }, options: { priority: 1 } }], {
      onSuccess: { name: "send-email", args: { to: "a@example.com" } },
    });
    // @ts-expect-error a misspelt name
    void firm.batch([{ name: "resise", args: { photo: "a.jpg" } }]);
    // @ts-expect-error a callback's arguments are checked too
    void firm.batch([], { onFinish: { name: "send-email", args: { to: 1 } } });
    void loose.batch([{ name: "any" }], { onFailure: { name: "other", args: { id: 1 } } });
    // @ts-expect-error without a map, arguments are still storable values
    void loose.batch([{ name: "any", args: new Map() }]);
  });

  it("types the testing helpers' filters", async () => {
    const testQueue = await createTestQueue(firm);
    await testQueue.assertEnqueued({ name: "resize", args: { photo: "a.jpg" } });
    await testQueue.assertEnqueued({ name: "resize" });
    await testQueue.assertEnqueued({ queue: "images" });
    // @ts-expect-error a misspelt name
    await testQueue.assertEnqueued({ name: "resise" });
    // @ts-expect-error a field of the wrong type
    await testQueue.refuteEnqueued({ name: "resize", args: { photo: 1 } });
  });

  it("a FirmQueue with a map is still a FirmQueue, for code that takes any", () => {
    const any: FirmQueue = firm;
    void any;
    expectTypeOf(firm).toExtend<FirmQueue>();
  });
});

describe("enqueue by name without a map", () => {
  it("takes any name and storable arguments, never unknown", () => {
    void loose.enqueue("anything", { a: [1, "two", null, new Date(), 3n] });
    void loose.enqueue("anything", null);
    interface Payload {
      readonly id: number;
      readonly tags?: readonly string[];
      readonly at: Date;
    }
    const payload: Payload = { id: 1, at: new Date() };
    void loose.enqueue("interface", payload);
    const fromJson: JobArguments = JSON.parse("{}") as JobArguments;
    void loose.enqueue("parsed", fromJson);
    // @ts-expect-error a Map cannot be stored
    void loose.enqueue("map", new Map());
    // @ts-expect-error nor a function, however deep
    void loose.enqueue("function", { nested: { run: () => 1 } });
    const unknownValue: unknown = {};
    // @ts-expect-error nor a value of unknown type
    void loose.enqueue("unknown", unknownValue);
    void loose.flow({ name: "parent", children: [{ name: "child", args: { id: 1 } }] });
    // @ts-expect-error a flow node's arguments are storable too
    void loose.flow({ name: "parent", args: new Set() });
    expectTypeOf<FlowNode>().toHaveProperty("args").toEqualTypeOf<JobArguments | undefined>();
  });
});

describe("getJob's info is a union on state", () => {
  it("each state has its own fields", async () => {
    const info = await firm.getJob(1);
    if (info === null) return;
    expectTypeOf(info).toEqualTypeOf<JobInfo>();
    // Before the state is checked, the other states' fields read as absent or their type.
    expectTypeOf(info.error).toEqualTypeOf<StoredError | undefined>();
    switch (info.state) {
      case "failed":
        expectTypeOf(info.error).toEqualTypeOf<StoredError | undefined>();
        expectTypeOf(info.result).toEqualTypeOf<undefined>();
        break;
      case "finished":
        expectTypeOf(info.result).toEqualTypeOf<unknown>();
        expectTypeOf(info.error).toEqualTypeOf<undefined>();
        break;
      case "ready":
        expectTypeOf(info.error).toEqualTypeOf<undefined>();
        expectTypeOf(info.result).toEqualTypeOf<undefined>();
        expectTypeOf(info.rateLimit).toEqualTypeOf<JobBudgetWait | undefined>();
        break;
      case "throttled":
        expectTypeOf(info.rateLimit).toEqualTypeOf<JobBudgetWait>();
        break;
      case "cancelled":
        expectTypeOf(info.cancelledAt).toEqualTypeOf<Date>();
        expectTypeOf(info.finishedAt).toEqualTypeOf<Date>();
        break;
      case "pending":
        expectTypeOf(info.finishedAt).toEqualTypeOf<null>();
        break;
    }
    expectTypeOf<JobInfoOf<"failed">["error"]>().toEqualTypeOf<StoredError | undefined>();
    expectTypeOf<JobInfoOf<"claimed">["state"]>().toEqualTypeOf<"claimed">();
  });
});

describe("job.get types the result as the handler returns it", () => {
  it("from defineJob's handler", async () => {
    const double = loose.defineJob("double", async (args: { n: number }) => ({ doubled: args.n * 2 }));
    const info = await double.get(1);
    expectTypeOf(info).toEqualTypeOf<JobInfo<{ doubled: number }> | null>();
    if (info?.state === "finished") expectTypeOf(info.result).toEqualTypeOf<{ doubled: number } | undefined>();
    if (info?.state === "failed") expectTypeOf(info.error).toEqualTypeOf<StoredError | undefined>();
    const sync = loose.defineJob("sync-result", (_args: { n: number }) => "done" as const);
    const synced = await sync.get(1);
    if (synced?.state === "finished") expectTypeOf(synced.result).toEqualTypeOf<"done" | undefined>();
  });

  it("from implement's handler, for a declared job", async () => {
    const declared = loose.declareJob<{ n: number }>("declared");
    const before = await declared.get(1);
    if (before?.state === "finished") expectTypeOf(before.result).toEqualTypeOf<unknown>();
    const implemented = loose.implement(declared, async (args) => ({ total: args.n }));
    const after = await implemented.get(1);
    if (after?.state === "finished") expectTypeOf(after.result).toEqualTypeOf<{ total: number } | undefined>();
    // @ts-expect-error the result has no such field
    if (after?.state === "finished") void after.result?.missing;
  });
});
