import { expect, test } from "vitest";
import { describeEachDatabase } from "./support/harness.js";

describeEachDatabase("firm.inspect by unique key", (env) => {
  test("jobs() and count() take a key filter, in every state, and refuse an empty key", async () => {
    const firm = env.firm();
    const job = firm.defineJob("sync", async () => {});
    const waiting = (await job.enqueue({ n: 1 }, { key: "acct-1" })).id;
    await job.enqueue({ n: 2 }, { key: "acct-2" });
    await job.enqueue({ n: 3 });
    const later = (await job.enqueue({ n: 4 }, { key: "acct-3", wait: "1h", queue: "slow" })).id;

    const ready = await firm.inspect.jobs({ state: "ready", key: "acct-1" });
    expect(ready.jobs.map((row) => row.id)).toEqual([waiting]);
    expect(await firm.inspect.count({ state: "ready", key: "acct-1" })).toEqual({ count: 1, exact: true });
    expect((await firm.inspect.jobs({ state: "scheduled", key: "acct-1" })).jobs).toEqual([]);
    expect((await firm.inspect.jobs({ state: "scheduled", key: "acct-3" })).jobs.map((row) => row.id)).toEqual([later]);
    expect(await firm.inspect.count({ state: "ready", key: "nobody" })).toEqual({ count: 0, exact: true });

    await firm.drain();
    const finished = await firm.inspect.jobs({ state: "finished", key: "acct-1" });
    expect(finished.jobs.map((row) => row.id)).toEqual([waiting]);
    expect(await firm.inspect.count({ state: "finished", key: "acct-1" })).toEqual({ count: 1, exact: true });
    expect(await firm.inspect.count({ state: "finished" })).toEqual({ count: 3, exact: true });
    await expect(firm.inspect.jobs({ state: "ready", key: "" })).rejects.toThrow(
      'inspect.jobs option key must be a non-empty string, got ""',
    );
  });
});
