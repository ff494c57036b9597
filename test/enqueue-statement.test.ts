import { expect, it } from "vitest";
import type { JobArguments } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";

/** Arguments whose text needs quoting in SQL, in array literals or in JSON. */
const AWKWARD = [
  '"quoted"',
  "back\\slash",
  "{braces},commas",
  "NULL",
  "",
  "multi\nline",
  "émoji 🚀",
  "tab\there",
  "'single'",
];

describeEachDatabase("enqueueing jobs due now", (env) => {
  it("keeps input order, arguments, queues and priorities, and makes every job ready", async () => {
    const firm = env.firm();
    const job = firm.defineJob("awkward", async () => {});
    const args = Array.from({ length: 45 }, (_, n) => ({ n, text: AWKWARD[n % AWKWARD.length] }));
    const ids = (
      await Promise.all([
        job.enqueueAll(args.slice(0, 30)),
        job.enqueueAll(args.slice(30), { queue: "other", priority: 7 }),
      ])
    )
      .flat()
      .map((result) => result.id);
    expect(new Set(ids).size).toBe(45);
    expect(ids.slice(0, 30)).toEqual([...ids.slice(0, 30)].sort((a, b) => a - b));
    for (const [index, id] of ids.entries()) {
      const info = await firm.getJob(id);
      expect(info).toMatchObject({
        state: "ready",
        arguments: args[index],
        queue: index < 30 ? "default" : "other",
        priority: index < 30 ? 0 : 7,
      });
    }
    const ready = await (await env.db())
      .selectFrom("firm_queue_ready_executions")
      .select(["job_id", "queue_name", "priority"])
      .orderBy("job_id")
      .execute();
    expect(ready.map((row) => [Number(row.job_id), row.queue_name, row.priority])).toEqual(
      [...ids]
        .sort((a, b) => a - b)
        .map((id) => [id, ids.indexOf(id) < 30 ? "default" : "other", ids.indexOf(id) < 30 ? 0 : 7]),
    );
  });

  it("stores any argument value, queue name and job name as the path through a transaction does", async () => {
    const firm = env.firm();
    // Queue and job names with JSON escapes, array-literal syntax and a lone surrogate (which
    // every database driver turns into U+FFFD on the way to UTF-8).
    const queue = "q\"\\{x}NULL'é🚀\ud800";
    const job = firm.defineJob('name"\\{}\udc00', async () => {});
    const values: JobArguments[] = [
      "plain string",
      'a "quoted" \\ string\n',
      42,
      -1.5,
      0,
      true,
      null,
      [],
      {},
      [1, "two", null, [3]],
      { lone: "\ud800", nul: "\u0000", nested: { deep: ["é🚀"] } },
    ];
    const bulk = await job.enqueueAll(values, { queue, priority: -3 });
    // The same jobs through the general path (scheduled, so not the single ready statement).
    const general = await job.enqueueAll(values, { queue, priority: -3, wait: "1h" });
    for (const [index, value] of values.entries()) {
      const [ready, scheduled] = [await firm.getJob(bulk[index]!.id), await firm.getJob(general[index]!.id)];
      expect(ready).toMatchObject({ state: "ready", arguments: value, priority: -3 });
      expect(scheduled).toMatchObject({ state: "scheduled", arguments: value, priority: -3 });
      expect([ready?.queue, ready?.name]).toEqual([scheduled?.queue, scheduled?.name]);
    }
    expect((await firm.getJob(bulk[0]!.id))?.queue).not.toContain("\ud800");
  });

  it("one job at a time gets ascending ids and runs", async () => {
    const firm = env.firm();
    const seen: unknown[] = [];
    const job = firm.defineJob("single", async (args: { text: string }) => void seen.push(args.text));
    const ids: number[] = [];
    for (const text of AWKWARD) ids.push((await job.enqueue({ text })).id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    await firm.drain();
    expect(seen).toEqual(AWKWARD);
  });
});
