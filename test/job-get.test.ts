import assert from "node:assert/strict";
import { expect, expectTypeOf, it } from "vitest";
import { ConfigurationError, type StoredError } from "../src/index.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";

describeEachDatabase("job.get", (env) => {
  it("reads a job of its name as getJob does, with the handler's result once finished", async () => {
    const firm = env.firm();
    const double = firm.defineJob("double", async (args: { n: number }) => ({
      doubled: args.n * 2,
      at: new Date("2026-12-04T10:00:00Z"),
    }));
    const id = await enqueued(double.enqueue({ n: 3 }));
    const waiting = await double.get(id);
    expect(waiting).toEqual(await firm.getJob(id));
    expect(waiting?.state).toBe("ready");
    expect(waiting).not.toHaveProperty("result");
    expect(await firm.drain()).toBe(1);
    const info = await double.get(id);
    expect(info).toEqual(await firm.getJob(id));
    assert(info?.state === "finished", `expected a finished job, got ${info?.state}`);
    expectTypeOf(info.result).toEqualTypeOf<{ doubled: number; at: Date } | undefined>();
    expect(info.result).toEqual({ doubled: 6, at: new Date("2026-12-04T10:00:00Z") });
    expect(info.result?.at).toBeInstanceOf(Date);
  });

  it("is null for an id with no job, or with a job of another name", async () => {
    const firm = env.firm();
    const one = firm.defineJob("one", async () => 1);
    const other = firm.defineJob("other", async () => 2);
    const id = await enqueued(other.enqueue(null));
    expect(await one.get(id)).toBeNull();
    expect((await other.get(id))?.name).toBe("other");
    expect(await one.get(id + 1000)).toBeNull();
    await expect(one.get("7" as unknown as number)).rejects.toThrow(ConfigurationError);
    await expect(one.get(0)).rejects.toThrow(/get\("one"\) needs a job id/);
  });

  it("through implement: a failed job has its error and no result", async () => {
    const firm = env.firm();
    const declared = firm.declareJob<{ n: number }>("breaks", { retry: { attempts: 1 } });
    const breaks = firm.implement(declared, async (args): Promise<{ n: number }> => {
      throw new Error(`cannot take ${args.n}`);
    });
    const id = await enqueued(breaks.enqueue({ n: 5 }));
    expect(await firm.drain()).toBe(1);
    const info = await breaks.get(id);
    expect(info).toEqual(await firm.getJob(id));
    assert(info?.state === "failed", `expected a failed job, got ${info?.state}`);
    expectTypeOf(info.error).toEqualTypeOf<StoredError | undefined>();
    expect(info.error?.message).toBe("cannot take 5");
    expect(info).not.toHaveProperty("result");
  });
});
